//! One Casebook per data folder, started as a person starts it (no WebDriver): a start
//! made while the running one closes opens cleanly, and a start beside a hung one opens
//! on its own. Neither ever fails or panics.

use casebook_e2e::{Xvfb, app_binary, data, exclusive};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// One start of the app, its log kept in a file.
pub(crate) struct Start {
    child: Child,
    log: PathBuf,
}

impl Start {
    fn new(xvfb: &Xvfb, data_dir: &Path, logs: &Path, n: usize, doc: &Path) -> Start {
        Start::spawn(
            xvfb,
            data_dir,
            &logs.join(format!("start-{n}.log")),
            &[doc],
            &[],
        )
    }

    /// The app with `args`, `env` added, its log in `log`.
    pub(crate) fn spawn(
        xvfb: &Xvfb,
        data_dir: &Path,
        log: &Path,
        args: &[&Path],
        env: &[(String, String)],
    ) -> Start {
        let child = Command::new(app_binary())
            .args(args)
            .env("DISPLAY", xvfb.display())
            .env_remove("WAYLAND_DISPLAY")
            .env("GDK_BACKEND", "x11")
            .env("NO_AT_BRIDGE", "1")
            .env("NO_COLOR", "1")
            .env("CASEBOOK_LOG", "info")
            .env("CASEBOOK_DATA_DIR", data_dir)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .expect("cannot start the app");
        Start {
            child,
            log: log.to_owned(),
        }
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the app says it is ready (its windows built, core started), or
    /// returns how it ended instead.
    pub(crate) fn ready(&mut self) -> Result<(), ExitStatus> {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if self
                .log()
                .lines()
                .any(|l| l.ends_with("casebook_app: ready"))
            {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                return Err(status);
            }
            assert!(
                Instant::now() < deadline,
                "a start was not ready within 120 s:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    pub(crate) fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{name}");
    }

    pub(crate) fn ended(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "a start did not close within 60 s:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// The processes this start spawned (WebKit's web and network processes), now.
    pub(crate) fn children(&self) -> Vec<u32> {
        let parent = self.child.id();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                // The parent pid is the 2nd field after the parenthesised command name.
                std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                    stat.rsplit_once(')')
                        .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                        == Some(parent)
                })
            })
            .collect()
    }

    pub(crate) fn assert_clean(&self, what: &str) {
        let log = self.log();
        assert!(!log.contains("panicked"), "{what} panicked:\n{log}");
    }
}

impl Drop for Start {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const LAUNCHES: usize = 50;

/// Waits (up to 60 s) until none of `pids` runs.
fn gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while pids
        .iter()
        .any(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists())
    {
        assert!(
            Instant::now() < deadline,
            "WebKit's processes {pids:?} outlived their app by 60 s"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Each start is closed (as a logout closes it: SIGTERM) and the next one made at
/// once, while it closes: 50 in a row, each opening its own window, each closing cleanly.
#[tokio::test(flavor = "multi_thread")]
async fn a_start_made_while_the_running_one_closes_opens_cleanly_fifty_times() {
    let _one = exclusive().await;
    let xvfb = Xvfb::start();
    let data_dir = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let doc = data("docx/headings-lorem-multirun.docx");
    let mut running = Start::new(&xvfb, data_dir.path(), logs.path(), 0, &doc);
    running.ready().expect("the first start opens");
    for n in 1..LAUNCHES {
        let spawned = running.children();
        running.signal("TERM");
        let mut next = Start::new(&xvfb, data_dir.path(), logs.path(), n, &doc);
        let closed = running.ended();
        // WebKit's processes outlive their app by a moment; on a loaded machine fifty
        // starts' worth would pile up on the display, which no person's launches do.
        gone(&spawned);
        running.assert_clean(&format!("start {}", n - 1));
        assert!(
            closed.success(),
            "start {} closes cleanly on SIGTERM: {closed}\n{}",
            n - 1,
            running.log()
        );
        if let Err(status) = next.ready() {
            panic!(
                "start {n}, made while the one before closed, ended ({status}) instead of opening:\n{}",
                next.log()
            );
        }
        next.assert_clean(&format!("start {n}"));
        running = next;
    }
    running.signal("TERM");
    assert!(running.ended().success());
    running.assert_clean("the last start");
    eprintln!("handover: {LAUNCHES} launches, each made while the one before closed");
}

/// A running start that is stuck (stopped) never answers the hand-over: the next start
/// waits its patience, then opens on its own and says why.
#[tokio::test(flavor = "multi_thread")]
async fn a_start_beside_a_hung_one_opens_on_its_own() {
    let _one = exclusive().await;
    let xvfb = Xvfb::start();
    let data_dir = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let doc = data("docx/headings-lorem-multirun.docx");
    let mut first = Start::new(&xvfb, data_dir.path(), logs.path(), 0, &doc);
    first.ready().expect("the first start opens");
    first.signal("STOP");
    let mut second = Start::new(&xvfb, data_dir.path(), logs.path(), 1, &doc);
    let opened = second.ready();
    first.signal("CONT");
    if let Err(status) = opened {
        panic!(
            "a start beside a hung one ended ({status}):\n{}",
            second.log()
        );
    }
    assert!(
        second
            .log()
            .contains("opening on its own: the running Casebook did not take this start"),
        "it says why it opened on its own:\n{}",
        second.log()
    );
    second.assert_clean("the second start");
    for (start, what) in [(&mut second, "the second"), (&mut first, "the first")] {
        start.signal("TERM");
        let status = start.ended();
        assert!(
            status.success(),
            "{what} closes cleanly: {status}\n{}",
            start.log()
        );
        start.assert_clean(what);
    }
}
