//! `kill -9` in the middle of following a mission: the next `mission watch` resumes
//! from the shared history and, in the end, every event is there exactly once, in
//! the service's order.

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
    let body = reqwest::Client::new()
        .get(format!("{url}/eve/v1/session/{id}/stream"))
        .bearer_auth(key)
        .header("Accept", "text/event-stream")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    body.lines()
        .filter_map(|l| l.strip_prefix("id:"))
        .map(|s| s.trim().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_watch_resumes_with_nothing_lost_or_repeated() {
    let service = casebook_sandbox::start(casebook_sandbox::SandboxConfig {
        mission_events: Some(300),
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

    // Three kills, each after a few more lines than the last.
    let mut kills = 0;
    for after in [20, 60, 120] {
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
    assert_eq!(kills, 3);
    assert!(want.len() >= 250, "{} events", want.len());
    assert_eq!(ids, want, "after {kills} kills: every event once, in order");
    service.stop().await;
}
