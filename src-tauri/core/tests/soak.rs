//! Soak (`make harden`, ignored by `make test`): one mission followed by core's
//! follower through 100 connections the sandbox cuts at random points (between
//! events, mid-event, mid-UTF-8 character): every event stored and sent once, in order.

mod common;

use casebook_core::backend::SandboxOptions;
use casebook_core::missions::client::MissionSpec;
use casebook_core::missions::follower::{Feed, MissionUpdate, Quiet, Sink};
use casebook_core::missions::store::MissionStatus;
use casebook_sandbox::MissionProtocol;
use casebook_testsupport::store::casebook_in;
use std::sync::{Arc, Mutex};

const CUTS: u64 = 100;
/// Long enough that every cut lands before the end: at most 7 whole events a connection.
const EVENTS: u64 = 1_000;
/// Cyrillic and CJK, so the events carry two- and three-byte characters to cut inside.
const OBJECTIVE: &str = "Влияние жары на здоровье пожилых людей 高齢者 городов Европы";

async fn faults(base: &str, body: serde_json::Value) -> serde_json::Value {
    let resp = reqwest::Client::new()
        .post(format!("{base}/_sandbox/faults"))
        .bearer_auth(casebook_sandbox::DEMO_KEY)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success());
    resp.json().await.unwrap()
}

/// The service's ids for the session, read in one clean connection once it is over.
async fn service_ids(base: &str, id: &str) -> Vec<String> {
    casebook_testsupport::sandbox::stream_ids(base, casebook_sandbox::DEMO_KEY, id).await
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "soak: minutes of reconnects; run by make harden"]
async fn soak_follower_through_100_random_cuts() {
    let dir = tempfile::tempdir().unwrap();
    let options = SandboxOptions {
        // The seeds' SSE vocabulary, with its event ids (the embedded default is eve).
        mission_protocol: Some(MissionProtocol::Legacy),
        mission_pace_ms: Some(0),
        mission_events: Some(EVENTS),
        ..SandboxOptions::default()
    };
    let core = casebook_in(dir.path(), options, Arc::new(Quiet)).await;
    let base = core.base_url().await.unwrap();
    faults(
        &base,
        serde_json::json!({"cutRandom": {"seed": 20_251_123, "count": CUTS}}),
    )
    .await;

    let record = core
        .start_mission(&MissionSpec::new(OBJECTIVE, 2500))
        .await
        .unwrap();
    let id = record.session_id.clone();
    let seen: Arc<Mutex<Vec<String>>> = Default::default();
    let keep = seen.clone();
    let sink: Sink = Box::new(move |u: MissionUpdate| {
        let v = serde_json::to_value(&u).unwrap();
        if v["type"] == "events" {
            let mut keep = keep.lock().unwrap();
            for e in v["events"].as_array().unwrap() {
                keep.push(e["event"]["id"].as_str().unwrap().to_owned());
            }
        }
        true
    });
    core.watch(&id, "soak", sink, Feed::EVERYTHING)
        .await
        .unwrap();
    core.watch_finished(&id).await;

    let drops = faults(&base, serde_json::json!({})).await["cutsMade"]
        .as_u64()
        .unwrap();
    let want = service_ids(&base, &id).await;
    let got = seen.lock().unwrap().clone();
    let stored: Vec<String> = core
        .store
        .events(&id, 0, u32::MAX)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event.id.unwrap())
        .collect();
    assert_eq!(drops, CUTS, "every cut happened before the mission ended");
    assert!(want.len() as u64 >= EVENTS - 10, "{} events", want.len());
    let lost = want.iter().filter(|w| !got.contains(w)).count();
    let repeated = got.len() - {
        let mut u = got.clone();
        u.sort();
        u.dedup();
        u.len()
    };
    assert_eq!((lost, repeated), (0, 0), "lost, repeated");
    assert_eq!(
        got, want,
        "the sink: every event once, in the service's order"
    );
    assert_eq!(
        stored, want,
        "the store: every event once, in the service's order"
    );
    let m = core.mission(&id).await.unwrap();
    assert_eq!(m.status, MissionStatus::Complete);
    println!(
        "soak: {drops} drops, {} events, {lost} lost, {repeated} repeated (follower)",
        want.len()
    );
    core.shutdown().await;
}
