//! Soak (`make harden`, ignored by `make test`): `casebook mission start --follow
//! --json` through 100 connections the sandbox cuts at random points (between
//! events, mid-event, mid-UTF-8 character): every event printed once, in the
//! service's order.

use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_casebook");
const CUTS: u64 = 100;
/// Long enough that every cut lands before the end: at most 7 whole events a connection.
const EVENTS: u64 = 1_000;
/// Cyrillic and CJK, so the events carry two- and three-byte characters to cut inside.
const OBJECTIVE: &str = "Влияние жары на здоровье пожилых людей 高齢者 городов Европы";

#[tokio::test(flavor = "multi_thread")]
#[ignore = "soak: minutes of reconnects; run by make harden"]
async fn soak_cli_follow_through_100_random_cuts() {
    let service = casebook_sandbox::start(casebook_sandbox::SandboxConfig {
        mission_events: Some(EVENTS),
        mission_pace_ms: Some(0),
        ..Default::default()
    })
    .await
    .unwrap();
    let (url, key) = (service.base_url().to_owned(), service.key().to_owned());
    service.knobs().set(|k| {
        k.cut_random = casebook_sandbox::knobs::CutRandom {
            seed: 4_051_977,
            count: CUTS,
        }
    });
    let data = tempfile::tempdir().unwrap();
    let cli = tokio::task::spawn_blocking({
        let (url, key, data) = (url.clone(), key.clone(), data.path().to_owned());
        move || {
            Command::new(BIN)
                .env("CASEBOOK_DATA_DIR", data)
                .env("CASEBOOK_INVESTIGATIONS_KEY", key)
                .env_remove("CASEBOOK_BASE_URL")
                .args(["--base-url", &url, "mission", "start", "--follow", "--json"])
                .args(["--objective", OBJECTIVE])
                .stdin(Stdio::null())
                .stderr(Stdio::inherit())
                .output()
                .unwrap()
        }
    });
    let out = cli.await.unwrap();
    assert!(out.status.success(), "exit {:?}", out.status.code());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let got: Vec<String> = lines
        .iter()
        .filter_map(|e| e["id"].as_str().map(str::to_owned))
        .collect();
    let session = lines
        .iter()
        .find_map(|e| e["data"]["sessionId"].as_str().map(str::to_owned))
        .expect("a session id in the events");
    let drops = service.knobs().cuts_made();
    let want = casebook_testsupport::sandbox::stream_ids(&url, &key, &session).await;
    assert_eq!(drops, CUTS, "every cut happened before the mission ended");
    assert!(want.len() as u64 >= EVENTS - 10, "{} events", want.len());
    let lost = want.iter().filter(|w| !got.contains(w)).count();
    let mut unique = got.clone();
    unique.sort();
    unique.dedup();
    let repeated = got.len() - unique.len();
    assert_eq!((lost, repeated), (0, 0), "lost, repeated");
    assert_eq!(got, want, "every event once, in the service's order");
    println!(
        "soak: {drops} drops, {} events, {lost} lost, {repeated} repeated (CLI)",
        want.len()
    );
    service.stop().await;
}
