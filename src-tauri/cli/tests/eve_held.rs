//! The CLI against older eve servers' held turns (generation B, each `heldShape`): a
//! watch ends exactly where the person must act (a question), and follows a turn held
//! on its own background task to its real end, which `show` never reports as waiting
//! on the person while it runs.

mod common;

use casebook_sandbox::{HeldShape, MissionProtocol};
use common::{Cli, casebook, ok};
use serde_json::Value;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

const SHAPES: [(HeldShape, &str); 4] = [
    (HeldShape::On, "on"),
    (HeldShape::NoOn, "no-on"),
    (HeldShape::CompletedHeld, "completed-held"),
    (HeldShape::WaitingInTurn, "waiting-in-turn"),
];

async fn sandbox() -> casebook_sandbox::RunningSandbox {
    casebook_testsupport::sandbox::missions(MissionProtocol::EveB, 40).await
}

/// Runs a command, killed after `limit`: a watch that misses its end fails, not hangs.
async fn run_within(cli: &Cli, args: &[&str], data: &Path, limit: Duration) -> Output {
    let mut child = casebook(args, &cli.url, &cli.key, data).spawn().unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
                .await
                .unwrap();
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{args:?} did not end within {limit:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn show(cli: &Cli, sid: &str, data: &Path) -> Value {
    let out = ok(&cli.run(&["mission", "show", sid, "--json"], data).await);
    serde_json::from_str(&out).unwrap()
}

fn has_report(shown: &Value) -> bool {
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["text"].as_str())
        .any(|t| t.contains("# Findings"))
}

async fn start(cli: &Cli, objective: &str, data: &Path) -> String {
    let out = ok(&cli
        .run(
            &["mission", "start", "--objective", objective, "--json"],
            data,
        )
        .await);
    let first: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    first["sessionId"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_held_in_each_shape_ends_the_watch_and_shows_needs_input() {
    for (shape, name) in SHAPES {
        let service = sandbox().await;
        service.knobs().set(|k| k.held_shape = shape);
        let cli = Cli::new(&service);
        let here = tempfile::tempdir().unwrap();
        let sid = start(
            &cli,
            "An ambiguous question about shade and heat",
            here.path(),
        )
        .await;
        let limit = Duration::from_secs(30);
        ok(&run_within(&cli, &["mission", "watch", &sid], here.path(), limit).await);
        let shown = show(&cli, &sid, here.path()).await;
        assert_eq!(shown["status"], "needs_input", "{name}: {shown}");
        assert_eq!(shown["pending"].as_array().unwrap().len(), 1, "{name}");
        assert!(
            !has_report(&shown),
            "{name}: the watch ran past the question"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_held_on_a_background_task_in_each_shape_is_followed_to_its_report() {
    for (shape, name) in SHAPES {
        let service = sandbox().await;
        service.knobs().set(|k| k.held_shape = shape);
        service.knobs().set(|k| k.background_task = true);
        let cli = Cli::new(&service);
        let here = tempfile::tempdir().unwrap();
        let sid = start(&cli, "Does shade reduce heat stroke?", here.path()).await;
        let watcher = {
            let (cli, sid, dir) = (cli.clone(), sid.clone(), here.path().to_owned());
            tokio::spawn(async move {
                let limit = Duration::from_secs(60);
                run_within(&cli, &["mission", "watch", &sid], &dir, limit).await
            })
        };
        // While the task holds the turn (its start stored, the report not yet), the
        // mission is running: neither waiting for a message nor for an answer.
        let mut seen_held = 0;
        while !watcher.is_finished() {
            let shown = show(&cli, &sid, here.path()).await;
            let held = shown.to_string().contains("archive_sources") && !has_report(&shown);
            if held {
                seen_held += 1;
                assert_eq!(shown["status"], "running", "{name}: {shown}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        ok(&watcher.await.unwrap());
        assert!(seen_held > 0, "{name}: the hold was never seen");
        let shown = show(&cli, &sid, here.path()).await;
        assert!(has_report(&shown), "{name}: the watch stopped at the hold");
        assert_eq!(shown["status"], "waiting", "{name}: {shown}");
        assert!(shown["pending"].as_array().unwrap().is_empty(), "{name}");
    }
}

/// A background result comes after the session waits, in a result turn of its own: a
/// later watch follows it, and `show` lists it as a result, not as the person's message.
#[tokio::test(flavor = "multi_thread")]
async fn a_background_result_after_the_wait_is_shown_as_a_result() {
    let service = sandbox().await;
    service.knobs().set(|k| k.task_result = true);
    let cli = Cli::new(&service);
    let here = tempfile::tempdir().unwrap();
    let (_, sid) = cli
        .start_following("Does shade reduce heat stroke?", here.path())
        .await;
    let shown = show(&cli, &sid, here.path()).await;
    assert_eq!(shown["status"], "waiting", "{shown}");
    let results = |shown: &Value| {
        shown["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["kind"] == "result")
            .map(|i| i["text"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    // The watch ended at the first turn's wait, before the result came.
    assert!(results(&shown).is_empty(), "{shown}");
    // Once delivered, watching again follows the result turn to its wait.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let limit = Duration::from_secs(30);
    ok(&run_within(&cli, &["mission", "watch", &sid], here.path(), limit).await);
    let shown = show(&cli, &sid, here.path()).await;
    let got = results(&shown);
    assert_eq!(got.len(), 1, "{shown}");
    assert!(got[0].contains("archive_sources finished"), "{got:?}");
    let users: Vec<&Value> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert!(
        users
            .iter()
            .all(|m| !m["text"].as_str().unwrap().contains("archive")),
        "a result is not the person's message: {users:?}"
    );
    let text = ok(&cli.run(&["mission", "show", &sid], here.path()).await);
    assert!(text.contains("[background result]"), "{text}");
}
