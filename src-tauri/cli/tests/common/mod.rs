//! Running the `casebook` binary against a sandbox, for the CLI's mission tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_casebook");

/// `casebook --base-url URL ARGS` with the investigations key, its own data folder, no
/// key from the environment for the other service, and no stdin.
pub fn casebook(args: &[&str], url: &str, key: &str, data: &Path) -> Command {
    let mut c = against(url, args);
    c.env_remove("CASEBOOK_CITATIONS_KEY")
        .env("CASEBOOK_INVESTIGATIONS_KEY", key)
        .env("CASEBOOK_DATA_DIR", data);
    c
}

/// `casebook --base-url URL ARGS`, with no address from the environment, no stdin, and
/// its output captured; the caller adds the keys and the data folder it means.
pub fn against(url: &str, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.arg("--base-url")
        .arg(url)
        .args(args)
        .env_remove("CASEBOOK_BASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Runs `cmd` to its end with `stdin` written to it (or none), its output captured.
pub fn fed(cmd: &mut Command, stdin: Option<&str>) -> Output {
    let mut child = cmd
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

/// A sandbox's address and key, and the data folder commands run with.
#[derive(Clone)]
pub struct Cli {
    pub url: String,
    pub key: String,
}

impl Cli {
    pub fn new(service: &casebook_sandbox::RunningSandbox) -> Self {
        Self {
            url: service.base_url().to_owned(),
            key: service.key().to_owned(),
        }
    }

    /// Runs one command to its end on a blocking thread, so the sandbox in this process
    /// keeps answering.
    pub async fn run(&self, args: &[&str], data: &Path) -> Output {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (url, key, data): (String, String, PathBuf) =
            (self.url.clone(), self.key.clone(), data.to_owned());
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            casebook(&args, &url, &key, &data).output().unwrap()
        })
        .await
        .unwrap()
    }

    /// `mission start --objective OBJECTIVE --follow --json`: its output and the session id.
    pub async fn start_following(&self, objective: &str, data: &Path) -> (String, String) {
        let out = ok(&self
            .run(
                &[
                    "mission",
                    "start",
                    "--objective",
                    objective,
                    "--follow",
                    "--json",
                ],
                data,
            )
            .await);
        let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        let sid = first["sessionId"].as_str().unwrap().to_owned();
        (out, sid)
    }
}

/// A mission followed to its first wait on `service`, in a data folder of its own: the CLI,
/// the folder and the session id.
#[allow(dead_code)]
pub async fn followed(
    service: &casebook_sandbox::RunningSandbox,
    objective: &str,
) -> (Cli, tempfile::TempDir, String) {
    let cli = Cli::new(service);
    let here = tempfile::tempdir().unwrap();
    let (_, sid) = cli.start_following(objective, here.path()).await;
    (cli, here, sid)
}

/// The output of a command that must have succeeded.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// What the sandbox received for `sid`, each body without its `idempotencyKey`: eve 1.x
/// (stream 27) must get one, a unique non-empty string; older generations none.
#[allow(dead_code)]
pub fn posted(
    service: &casebook_sandbox::RunningSandbox,
    sid: &str,
    protocol: casebook_sandbox::MissionProtocol,
) -> Vec<serde_json::Value> {
    let mut keys = std::collections::HashSet::new();
    service
        .posts(sid)
        .into_iter()
        .map(|mut post| {
            let key = post["body"]
                .as_object_mut()
                .and_then(|b| b.remove("idempotencyKey"));
            if protocol == casebook_sandbox::MissionProtocol::Eve27 {
                let key = key.as_ref().and_then(|k| k.as_str()).unwrap_or_default();
                assert!(!key.is_empty() && keys.insert(key.to_owned()), "{post}");
            } else {
                assert!(key.is_none(), "{protocol:?}: {post}");
            }
            post
        })
        .collect()
}

/// A new pseudo-terminal: its master end, and the end a child is given as its terminal.
pub fn pty() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::{FromRawFd, OwnedFd};
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors it opened; no name, default settings.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors are ours alone from here on.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}
