//! `kill -9` in the middle of following a mission: the next `mission watch` resumes
//! from the shared history and, in the end, every event is there exactly once, in
//! the service's order. `make test` kills three times; the `crash_` tests (ignored,
//! run by `make harden`) kill many times at random moments during a mission, a save,
//! a key update and the store's writes, and count their tries.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_casebook");

fn casebook(data: &std::path::Path, url: &str, key: &str) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env("CASEBOOK_DATA_DIR", data)
        .env("CASEBOOK_INVESTIGATIONS_KEY", key)
        .env_remove("CASEBOOK_BASE_URL")
        .args(["--base-url", url])
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// The ids of the session's events as the service holds them, read once it is over.
async fn service_ids(url: &str, key: &str, id: &str) -> Vec<String> {
    let body = casebook_testsupport::sandbox::stream_text(url, key, id).await;
    body.lines()
        .filter_map(|l| l.strip_prefix("id:"))
        .map(|s| s.trim().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_watch_resumes_with_nothing_lost_or_repeated() {
    killed_watches(&[20, 60, 120], 300).await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "crash: many kills; run by make harden"]
async fn crash_mission_watch_killed_many_times() {
    let kills = tries("CASEBOOK_HARDEN_MISSION_KILLS", 25);
    let mut rng = Rng::seeded();
    // Each kill a random number of lines further on.
    let mut after = Vec::new();
    let mut at = 0;
    for _ in 0..kills {
        at += 1 + rng.below(40) as usize;
        after.push(at);
    }
    let ids = killed_watches(&after, at as u64 + 200).await;
    println!("crash: {kills} kills (mission watch), 0 losses; {ids} events each once");
}

/// Kills `mission watch` after each count of printed lines in `after`, then watches
/// to the end: every event once, in the service's order. The events seen.
async fn killed_watches(after: &[usize], events: u64) -> usize {
    let service = casebook_sandbox::start(casebook_sandbox::SandboxConfig {
        mission_events: Some(events),
        mission_pace_ms: Some(10),
        ..Default::default()
    })
    .await
    .unwrap();
    let (url, key) = (service.base_url().to_owned(), service.key().to_owned());
    let data = tempfile::tempdir().unwrap();
    let started = casebook(data.path(), &url, &key)
        .args([
            "mission",
            "start",
            "--objective",
            "Do green roofs cool cities?",
        ])
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert!(started.status.success());
    let id = String::from_utf8(started.stdout).unwrap().trim().to_owned();

    let mut kills = 0;
    for &after in after {
        let mut child = casebook(data.path(), &url, &key)
            .args(["mission", "watch", &id, "--json"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let read = tokio::task::spawn_blocking(move || {
            let mut lines = BufReader::new(stdout).lines();
            let mut n = 0;
            while n < after && lines.next().is_some_and(|l| l.is_ok()) {
                n += 1;
            }
            n
        });
        let seen = read.await.unwrap();
        assert_eq!(seen, after, "the watch printed too little before the kill");
        // SIGKILL: no destructor, no flush, nothing but what SQLite already committed.
        child.kill().unwrap();
        child.wait().unwrap();
        kills += 1;
    }

    let deadline = Instant::now() + Duration::from_secs(60);
    let out = loop {
        let out = casebook(data.path(), &url, &key)
            .args(["mission", "watch", &id, "--json"])
            .stdout(Stdio::piped())
            .output()
            .unwrap();
        assert!(out.status.success(), "exit {:?}", out.status.code());
        let text = String::from_utf8(out.stdout).unwrap();
        if text.contains("\"session.completed\"") || Instant::now() > deadline {
            break text;
        }
    };
    let ids: Vec<String> = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    let want = service_ids(&url, &key, &id).await;
    assert_eq!(kills, after.len());
    assert!(want.len() as u64 >= events - 50, "{} events", want.len());
    assert_eq!(ids, want, "after {kills} kills: every event once, in order");
    service.stop().await;
    want.len()
}

/// How many tries a harden test makes: the variable, or its default.
fn tries(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// xorshift64, seeded from the clock (and printed, to repeat a failing run with
/// CASEBOOK_HARDEN_SEED).
struct Rng(u64);

impl Rng {
    fn seeded() -> Self {
        let seed = std::env::var("CASEBOOK_HARDEN_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("CASEBOOK_HARDEN_SEED={seed}");
        Self(seed | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }

    /// A moment in `0..=max`.
    fn moment(&mut self, max: Duration) -> Duration {
        Duration::from_micros(self.below(max.as_micros() as u64 + 1))
    }
}

/// Runs `cmd` to its end once, for how long a whole run takes.
fn timed(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    start.elapsed()
}

/// Spawns `cmd`, SIGKILLs it after `after` (unless it ended first): whether the kill
/// came before the end.
fn kill_after(cmd: &mut Command, stdin: Option<&str>, after: Duration) -> bool {
    use std::io::Write;
    let mut child = cmd
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        let _ = pipe.write_all(text.as_bytes());
    }
    std::thread::sleep(after);
    let killed = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    child.wait().unwrap();
    killed
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(name)
}

/// The folder's file names, sorted.
fn names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
#[ignore = "crash: many kills; run by make harden"]
fn crash_save_killed_at_random_moments() {
    let tries = tries("CASEBOOK_HARDEN_SAVE_KILLS", 40);
    let mut rng = Rng::seeded();
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let input = dir.path().join("thesis.docx");
    std::fs::copy(fixture("docx/citations-bibliography-toc.docx"), &input).unwrap();
    let original = std::fs::read(&input).unwrap();
    let output = dir.path().join("thesis.cited.docx");
    let cite = |seed: u64| {
        let mut cmd = Command::new(BIN);
        cmd.env("CASEBOOK_DATA_DIR", data.path())
            .env_remove("CASEBOOK_BASE_URL")
            .env_remove("CASEBOOK_CITATIONS_KEY")
            .args(["--sandbox", "cite"])
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .args([
                "--overwrite",
                "--seed",
                &seed.to_string(),
                "--mode",
                "random",
            ]);
        cmd
    };
    let whole = timed(cite(0).stdout(Stdio::null()).stderr(Stdio::piped()));
    std::fs::remove_file(&output).unwrap();
    let (mut killed, mut none, mut complete) = (0, 0, 0);
    for i in 0..tries {
        // Every other try replaces an earlier result, the rest write a new file.
        if i % 2 == 0 {
            let _ = std::fs::remove_file(&output);
        }
        // Half the kills anywhere in a run, half near its end, where the save is.
        let at = if i % 4 < 2 {
            rng.moment(whole)
        } else {
            whole.mul_f64(0.7) + rng.moment(whole.mul_f64(0.5))
        };
        killed += usize::from(kill_after(&mut cite(i as u64 + 1), None, at));
        assert_eq!(
            std::fs::read(&input).unwrap(),
            original,
            "try {i}: the original changed"
        );
        if output.exists() {
            let bytes = std::fs::read(&output).unwrap();
            casebook_core::citations::documents::open(&output)
                .unwrap_or_else(|e| panic!("try {i}: a partial output: {}", e.message()));
            casebook_core::citations::reader::read(&bytes)
                .unwrap_or_else(|e| panic!("try {i}: an unreadable output: {}", e.message()));
            complete += 1;
        } else {
            none += 1;
        }
        let left = names(dir.path());
        assert!(
            left.iter()
                .all(|n| n == "thesis.docx" || n == "thesis.cited.docx"),
            "try {i}: left behind {left:?}"
        );
    }
    assert!(killed > 0, "no try was killed before it ended");
    println!(
        "crash: {killed} kills (save; {tries} tries, the rest ended first), 0 losses; {none} without output, {complete} complete, 0 partial"
    );
}

/// What the keyring holds for Casebook's citations key, read with `secret-tool`.
fn stored_citations_key() -> String {
    let out = Command::new("secret-tool")
        .args(["lookup", "service", "casebook", "username", "citations"])
        .output()
        .expect("secret-tool (libsecret-tools) is installed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "crash: many kills; run by make harden"]
fn crash_key_update_killed_at_random_moments() {
    assert!(
        std::env::var_os("CASEBOOK_KEYRING_SESSION").is_some(),
        "run under scripts/with-keyring.sh: this test needs the real keyring"
    );
    let tries = tries("CASEBOOK_HARDEN_KEY_KILLS", 40);
    let mut rng = Rng::seeded();
    let data = tempfile::tempdir().unwrap();
    let set = || {
        let mut cmd = Command::new(BIN);
        cmd.env("CASEBOOK_DATA_DIR", data.path())
            .env_remove("CASEBOOK_CITATIONS_KEY")
            .args(["keys", "set", "citations"]);
        cmd
    };
    let mut old = "cit-key-old-0000000000abcd".to_owned();
    let first = set()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(old.as_bytes())?;
            c.wait()
        })
        .unwrap();
    assert!(first.success());
    assert_eq!(stored_citations_key(), old);
    let probe = "cit-key-probe-000000000000".to_owned();
    // How long one whole update takes, to spread the kills over it.
    let whole = {
        let mut cmd = set();
        let start = Instant::now();
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(probe.as_bytes())
                .unwrap();
        }
        assert!(child.wait().unwrap().success());
        start.elapsed()
    };
    old = stored_citations_key();
    assert_eq!(old, probe);
    let (mut kept, mut took, mut killed) = (0, 0, 0);
    for i in 0..tries {
        let new = format!("cit-key-{i:04}-{:016x}", rng.below(u64::MAX));
        killed += usize::from(kill_after(&mut set(), Some(&new), rng.moment(whole)));
        let now = stored_citations_key();
        if now == new {
            took += 1;
            old = new;
        } else {
            assert_eq!(
                now, old,
                "try {i}: the key is neither the old one nor the new one"
            );
            kept += 1;
        }
    }
    assert!(killed > 0, "no update was killed before it ended");
    let _ = Command::new(BIN)
        .env("CASEBOOK_DATA_DIR", data.path())
        .args(["keys", "delete", "citations"])
        .output();
    println!(
        "crash: {killed} kills (key update; {tries} tries, the rest ended first), 0 losses; {kept} kept the old key, {took} the new one"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "crash: many kills; run by make harden"]
async fn crash_store_writes_killed_at_random_moments() {
    let tries = tries("CASEBOOK_HARDEN_STORE_KILLS", 25);
    let mut rng = Rng::seeded();
    let service = casebook_sandbox::start(casebook_sandbox::SandboxConfig {
        mission_events: Some(3_000),
        mission_pace_ms: Some(0),
        // Every try reads every mission back: far more requests than the limiter allows.
        rate_limit: casebook_sandbox::RateLimit {
            per_minute: 0,
            ..Default::default()
        },
        ..Default::default()
    })
    .await
    .unwrap();
    let (url, key) = (service.base_url().to_owned(), service.key().to_owned());
    let data = tempfile::tempdir().unwrap();
    let start_mission = || {
        let out = casebook(data.path(), &url, &key)
            .args([
                "mission",
                "start",
                "--objective",
                "Do green roofs cool cities?",
            ])
            .stdout(Stdio::piped())
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let watch = |id: &str| {
        let mut cmd = casebook(data.path(), &url, &key);
        cmd.args(["mission", "watch", id, "--json"]);
        cmd
    };
    let first = start_mission();
    let whole = timed(watch(&first).stdout(Stdio::null()));
    let mut missions = vec![first];
    let mut wanted = std::collections::HashMap::new();
    let mut killed = 0;
    for i in 0..tries {
        let id = start_mission();
        killed += usize::from(kill_after(&mut watch(&id), None, rng.moment(whole)));
        missions.push(id);
        let db = rusqlite::Connection::open(data.path().join("casebook.db")).unwrap();
        let check: String = db
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok", "try {i}");
        for id in &missions {
            let rows: Vec<(i64, String)> = db
                .prepare("SELECT seq, event_id FROM events WHERE session_id = ?1 ORDER BY seq")
                .unwrap()
                .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let seqs: Vec<i64> = rows.iter().map(|r| r.0).collect();
            assert_eq!(
                seqs,
                (1..=rows.len() as i64).collect::<Vec<_>>(),
                "try {i}: gaps"
            );
            if !wanted.contains_key(id) {
                wanted.insert(id.clone(), service_ids(&url, &key, id).await);
            }
            let want = &wanted[id];
            let got: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
            assert!(
                want.len() >= 2_900,
                "try {i}: the service's list: {}",
                want.len()
            );
            assert!(got.len() <= want.len(), "try {i}: more stored than sent");
            assert_eq!(
                got,
                want[..got.len()],
                "try {i}: not a prefix of the service's events"
            );
        }
    }
    assert!(killed > 0, "no watch was killed before it ended");
    println!(
        "crash: {killed} kills (store writes; {tries} tries, the rest ended first), 0 losses; integrity ok, every mission a gap-free prefix"
    );
    service.stop().await;
}

/// `kill -9` of `mission watch` at random moments of a mission on the real eve 1.0.1 (its
/// `steps` turn: 30 steps of about a second), then a watch to the turn's end: what the
/// history keeps is exactly what eve stored, each record once, in eve's order, and the
/// history passes SQLite's integrity check. The judge is eve's own stored stream.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "crash: many kills; run by make harden"]
async fn crash_mission_watch_killed_against_the_real_eve() {
    use casebook_testsupport::real_eve::RealEve;
    let kills = tries("CASEBOOK_HARDEN_REAL_EVE_KILLS", 20);
    let mut rng = Rng::seeded();
    let eve = tokio::task::spawn_blocking(RealEve::start).await.unwrap();
    let (url, key) = (eve.base_url().to_owned(), eve.key().to_owned());
    let data = tempfile::tempdir().unwrap();
    let out = casebook(data.path(), &url, &key)
        .args(["mission", "start", "--objective", "Work in steps"])
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", eve.log_tail());
    let id = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let watch = || {
        let mut cmd = casebook(data.path(), &url, &key);
        cmd.args(["mission", "watch", &id, "--json"]);
        cmd
    };
    let mut killed = 0;
    for _ in 0..kills {
        let after = Duration::from_millis(200 + rng.below(1_300));
        killed += usize::from(kill_after(&mut watch(), None, after));
    }
    let last = watch().stdout(Stdio::null()).status().unwrap();
    assert!(
        last.success(),
        "the last watch follows to the turn's end: {last}"
    );
    let records = eve.assert_kept_as_stored(&data.path().join("casebook.db"), &id, killed);
    assert!(
        killed > kills / 2,
        "most watches were killed mid-turn: {killed}"
    );
    println!(
        "crash: {killed} kills (mission watch against the real eve {}), 0 losses; {} records each once; integrity ok",
        eve.version(),
        records
    );
}
