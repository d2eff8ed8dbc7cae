//! The sandbox's own defaults for a mission's sandbox extensions (`events`,
//! `paceMs`): `SandboxConfig::mission_events` / `mission_pace_ms`, and the binary's
//! `--mission-events` / `--mission-pace-ms`.

mod common;

use casebook_sandbox::{Pace, SandboxConfig, start};
use common::*;
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::io::BufRead;

#[tokio::test]
async fn mission_events_is_the_length_of_missions_that_do_not_ask() {
    let sb = start(SandboxConfig {
        mission_events: Some(120),
        ..config()
    })
    .await
    .unwrap();
    let id = create(&sb, json!({})).await;
    let long = full(&sb, &id).await;
    // Without the default a mission has 25 to 40 events.
    assert!((110..=120).contains(&long.len()), "{}", long.len());
    assert_eq!(kinds(&long).last(), Some(&"session.completed"));

    // A request's own `events` still wins.
    let id = create(&sb, json!({"events": 12})).await;
    let short = full(&sb, &id).await;
    assert!(short.len() <= 12, "{}", short.len());
    sb.stop().await;
}

#[tokio::test]
async fn mission_pace_ms_is_the_pace_of_missions_that_do_not_ask() {
    // The sandbox's pace is instant, so only the default can hold the mission back.
    let sb = start(SandboxConfig {
        pace: Pace::Instant,
        mission_pace_ms: Some(60_000),
        ..config()
    })
    .await
    .unwrap();
    let id = create(&sb, json!({})).await;
    let mut s = sse(request(&sb, &id, None).await);
    let first = s.next().await.unwrap().unwrap();
    assert_eq!(first.kind, "turn.started");
    // Still active after its first event: a 60 s pause is holding the second back.
    let resp = post_json(&sb, &format!("/eve/v1/session/{id}/cancel"), &json!({})).await;
    assert_eq!(resp.status(), 200);
    let mut rest = Vec::new();
    while let Some(ev) = tokio::time::timeout(PATIENCE, s.next()).await.unwrap() {
        rest.push(ev.unwrap());
    }
    assert_eq!(kinds(&rest), ["turn.cancelled", "session.waiting"]);

    // A request's own `paceMs` still wins: this one plays to its end.
    let id = create(&sb, json!({"paceMs": 0})).await;
    let events = full(&sb, &id).await;
    assert_eq!(kinds(&events).last(), Some(&"session.completed"));
    sb.stop().await;
}

#[tokio::test]
async fn the_binary_takes_mission_events_and_mission_pace_ms() {
    // Realistic pace would take half a minute; --mission-pace-ms 0 makes it instant.
    let mut child = Child(
        std::process::Command::new(env!("CARGO_BIN_EXE_casebook-sandbox"))
            .args(["--pace", "realistic", "--rate-limit", "0"])
            .args(["--mission-events", "90", "--mission-pace-ms", "0"])
            // The seeds' SSE protocol (the binary speaks eve's generation A by default).
            .args(["--mission-protocol", "legacy"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let base = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        line.trim().to_owned()
    })
    .await
    .unwrap();
    assert!(base.starts_with("http://127.0.0.1:"), "{base:?}");

    let auth = format!("Bearer {}", casebook_sandbox::DEMO_KEY);
    let resp = client()
        .post(format!("{base}/eve/v1/session"))
        .header("authorization", &auth)
        .json(&json!({ "message": MESSAGE }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let id = resp.json::<Value>().await.unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let resp = client()
        .get(format!("{base}/eve/v1/session/{id}/stream"))
        .header("authorization", &auth)
        .send()
        .await
        .unwrap();
    let all: Vec<Ev> = tokio::time::timeout(PATIENCE, sse(resp).map(Result::unwrap).collect())
        .await
        .expect("an instant mission streams to its end at once");
    assert!((80..=90).contains(&all.len()), "{}", all.len());
    assert_eq!(kinds(&all).last(), Some(&"session.completed"));
}
