//! A real eve server on loopback: the release pinned in `tests/eve-agent*/`, installed by
//! `scripts/eve-server.sh` into a cache outside the tree, serving our test agent (a
//! scripted AI SDK model, so no key and no network). A failure to install or start is a
//! test failure with eve's own output, never a skip.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The release today's users run.
pub const CURRENT: &str = "1.0.1";
/// Older real releases the suite also runs against: generation B (streams 26 and 25) and
/// generation A (stream 21).
pub const OLDER: &[&str] = &["0.80.1", "0.64.1", "0.30.8"];

/// How long a cold start may take to answer its health route (a loaded CI machine).
const START_WITHIN: Duration = Duration::from_secs(90);

/// The checkout's root (this crate is `src-tauri/testsupport`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the checkout's root")
        .to_owned()
}

fn script() -> PathBuf {
    repo_root().join("scripts/eve-server.sh")
}

/// Installs `version` once per test process (the script is quick when it is already
/// installed, and locks against other processes installing it at the same time).
fn install(version: &str) {
    static DONE: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    let done = DONE.get_or_init(|| Mutex::new(Vec::new()));
    let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
    if done.iter().any(|v| v == version) {
        return;
    }
    let out = Command::new("bash")
        .arg(script())
        .args(["install", version])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script().display()));
    assert!(
        out.status.success(),
        "installing eve {version} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    done.push(version.to_owned());
}

/// A key no other run shares, so a test that leaks it shows.
fn fresh_key() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    format!("eve-test-{:016x}", h.finish())
}

/// A running eve server, stopped (its whole process group) when dropped.
pub struct RealEve {
    child: Child,
    version: String,
    base_url: String,
    key: String,
    log: PathBuf,
    _dir: tempfile_dir::Dir,
}

impl RealEve {
    /// Today's release ([`CURRENT`]).
    pub fn start() -> Self {
        Self::start_version(CURRENT)
    }

    /// `version` (one with a `tests/eve-agent*` folder), on a free port. Blocking: from
    /// async code, call it in `spawn_blocking`.
    pub fn start_version(version: &str) -> Self {
        install(version);
        let mut last = String::new();
        // A port found free can be taken before eve binds it: try another.
        for _ in 0..3 {
            match Self::try_start(version) {
                Ok(eve) => return eve,
                Err(why) => last = why,
            }
        }
        panic!("eve {version} did not start:\n{last}");
    }

    fn try_start(version: &str) -> Result<Self, String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let dir = tempfile_dir::Dir::new(&format!("casebook-eve-{version}"));
        let log = dir.path().join("eve.log");
        let out = std::fs::File::create(&log).map_err(|e| e.to_string())?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let key = fresh_key();
        let child = Command::new("bash")
            .arg(script())
            .args(["start", version, &port.to_string()])
            .env("EVE_TEST_KEY", &key)
            // eve keeps its local sessions under its working data: one folder a server.
            .env("CASEBOOK_EVE_DATA_DIR", dir.path())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", script().display()))?;
        let mut eve = RealEve {
            child,
            version: version.to_owned(),
            base_url: format!("http://127.0.0.1:{port}"),
            key,
            log,
            _dir: dir,
        };
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = eve.child.try_wait() {
                return Err(format!("eve exited ({status}):\n{}", eve.log_tail()));
            }
            if health(port) {
                return Ok(eve);
            }
            if started.elapsed() > START_WITHIN {
                return Err(format!(
                    "no answer from /eve/v1/health within {} s:\n{}",
                    START_WITHIN.as_secs(),
                    eve.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    /// `http://127.0.0.1:<port>`, the base URL Casebook is pointed at.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The one bearer key the agent's route auth accepts.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The end of what the server printed, for a failing test's message.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(60)..].join("\n")
    }
}

impl Drop for RealEve {
    fn drop(&mut self) {
        let group = -(self.child.id() as i32);
        // SAFETY: signals the process group this fixture started, and nothing else.
        unsafe { libc::kill(group, libc::SIGTERM) };
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above; whatever of the group is left.
        unsafe { libc::kill(group, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// `GET /eve/v1/health` answers 200 (a raw request: no client library to bring in).
fn health(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let req = format!(
        "GET /eve/v1/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    );
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

/// A temporary folder removed on drop (std only, so this crate needs no tempfile).
mod tempfile_dir {
    use std::path::{Path, PathBuf};

    pub struct Dir(PathBuf);

    impl Dir {
        pub fn new(prefix: &str) -> Self {
            use std::sync::atomic::{AtomicU64, Ordering};
            static N: AtomicU64 = AtomicU64::new(0);
            let path = std::env::temp_dir().join(format!(
                "{prefix}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&path).expect("a temporary folder");
            Dir(path)
        }

        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl RealEve {
    /// A session's facts as eve itself stores them, read back whole (`follow=false`):
    /// each fact's type and its data, its scope joined to the data as Casebook keeps it.
    /// Progress records are not stored by eve and are left out. Read with curl, so the
    /// judge shares no code with the client it judges.
    pub fn stored_facts(&self, session: &str) -> Vec<(String, serde_json::Value)> {
        let out = Command::new("curl")
            .args(["-sS", "--fail-with-body", "--max-time", "60"])
            .args(["-H", &format!("Authorization: Bearer {}", self.key)])
            .arg(format!(
                "{}/eve/v1/session/{session}/stream?follow=false&startIndex=0",
                self.base_url
            ))
            .output()
            .expect("curl runs");
        assert!(
            out.status.success(),
            "eve's stored stream of {session}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let mut facts = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let Ok(serde_json::Value::Object(record)) = serde_json::from_str(line) else {
                continue;
            };
            let Some(serde_json::Value::Array(list)) = record.get("facts") else {
                continue;
            };
            for fact in list {
                let kind = fact["type"].as_str().unwrap_or_default().to_owned();
                let mut data = fact.get("data").cloned().unwrap_or(serde_json::Value::Null);
                if let (Some(scope), Some(d)) = (fact.get("scope"), data.as_object_mut())
                    && !d.contains_key("scope")
                {
                    d.insert("scope".into(), scope.clone());
                }
                facts.push((kind, data));
            }
        }
        facts
    }
}

/// The record kinds eve 1.x sends only as progress (never stored, never replayed).
pub const PROGRESS_KINDS: [&str; 2] = ["content.delta", "call.input"];

/// What Casebook's history (`casebook.db` in a data folder) holds of a mission, in order:
/// each record's kind and data, progress records left out, and whether SQLite's own
/// `integrity_check` passes ("ok").
pub fn kept_records(
    db: &std::path::Path,
    session: &str,
) -> (Vec<(String, serde_json::Value)>, String) {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("the history opens");
    let check: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check runs");
    let mut stmt = c
        .prepare("SELECT event, data FROM events WHERE session_id = ?1 ORDER BY seq")
        .unwrap();
    let rows = stmt
        .query_map([session], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .filter(|(kind, _)| !PROGRESS_KINDS.contains(&kind.as_str()))
        .map(|(kind, data)| (kind, serde_json::from_str(&data).unwrap()))
        .collect();
    (rows, check)
}

impl RealEve {
    /// Judges a history in `db` after `killed` kills of whoever kept `session`: it passes
    /// SQLite's integrity check and holds exactly the records eve stored (a whole turn,
    /// ended), each once, in eve's order. How many there are.
    pub fn assert_kept_as_stored(
        &self,
        db: &std::path::Path,
        session: &str,
        killed: usize,
    ) -> usize {
        let (kept, check) = kept_records(db, session);
        assert_eq!(check, "ok");
        let stored = self.stored_facts(session);
        assert!(stored.len() > 100, "a whole turn: {}", stored.len());
        assert!(
            stored.iter().any(|(kind, _)| kind == "turn.settled"),
            "the turn ended"
        );
        let kinds =
            |v: &[(String, serde_json::Value)]| v.iter().map(|r| r.0.clone()).collect::<Vec<_>>();
        assert_eq!(
            kinds(&kept),
            kinds(&stored),
            "after {killed} kills: every record once"
        );
        assert_eq!(
            kept, stored,
            "after {killed} kills: the records as eve stored them"
        );
        stored.len()
    }
}
