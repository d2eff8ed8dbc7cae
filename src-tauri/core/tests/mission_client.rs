//! The investigation client and its reconnecting stream against the real sandbox
//! over loopback HTTP, with faults: nothing lost, nothing repeated.

mod common;

use casebook_core::ErrorCode;
use casebook_core::keys::ApiKey;
use casebook_core::missions::client::{InvestigationClient, MissionSpec, Session};
use casebook_core::missions::protocol::{EventKind, MissionEvent};
use casebook_core::missions::store::{MissionStatus, MissionStore};
use casebook_core::missions::stream::{WatchOptions, WatchUpdate};
use casebook_core::net::connection::Connection;
use casebook_sandbox::{Pace, RunningSandbox, SandboxConfig, start};
use common::investigation_client;
use std::time::Duration;

async fn setup() -> (RunningSandbox, InvestigationClient) {
    let s = start(SandboxConfig {
        pace: Pace::Instant,
        ..Default::default()
    })
    .await
    .unwrap();
    let c = investigation_client(&s);
    (s, c)
}

fn fast() -> WatchOptions {
    WatchOptions {
        initial_backoff: Duration::from_millis(20),
        ..Default::default()
    }
}

/// Starts a mission whose events come `pace_ms` apart (a sandbox extension).
async fn paced(s: &RunningSandbox, pace_ms: u64) -> String {
    let message = MissionSpec::new(
        "How does urban heat exposure affect hospital admissions?",
        2500,
    )
    .message()
    .unwrap();
    let resp: serde_json::Value = reqwest::Client::new()
        .post(format!("{}/eve/v1/session", s.base_url()))
        .bearer_auth(s.key())
        .json(&serde_json::json!({"message": message, "paceMs": pace_ms}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    resp["sessionId"].as_str().unwrap().to_owned()
}

async fn collect(
    c: &InvestigationClient,
    id: &str,
    opts: WatchOptions,
) -> (Vec<MissionEvent>, Vec<WatchUpdate>) {
    let mut events = Vec::new();
    let mut other = Vec::new();
    c.watch(id, opts, |u| match u {
        WatchUpdate::Event { event } => events.push(event),
        u => other.push(u),
    })
    .await
    .unwrap();
    (events, other)
}

fn ids(events: &[MissionEvent]) -> Vec<String> {
    events.iter().map(|e| e.id.clone().unwrap()).collect()
}

#[tokio::test]
async fn a_mission_streams_to_completion() {
    let (_s, c) = setup().await;
    let session: Session = c
        .create_session(&MissionSpec::new("Is coffee good for you?", 1000))
        .await
        .unwrap();
    assert!(session.continuation_token.is_some());
    let (events, _) = collect(&c, &session.session_id, fast()).await;
    let numbers: Vec<u64> = events
        .iter()
        .map(|e| e.id.as_ref().unwrap().parse().unwrap())
        .collect();
    assert!(
        numbers.windows(2).all(|w| w[1] == w[0] + 1),
        "ids go up by one: {numbers:?}"
    );
    assert_eq!(events.last().unwrap().kind, EventKind::SessionCompleted);
    for kind in [
        EventKind::TurnStarted,
        EventKind::Plan,
        EventKind::SearchQuery,
        EventKind::SourceFound,
        EventKind::Evidence,
        EventKind::FindingVerified,
        EventKind::SpendUpdated,
        EventKind::ReportFinal,
    ] {
        assert!(events.iter().any(|e| e.kind == kind), "no {kind:?} event");
        assert!(
            events
                .iter()
                .filter(|e| e.kind == kind)
                .all(|e| e.payload().is_some()),
            "{kind:?} payload"
        );
    }
    assert!(
        events.iter().all(|e| e.kind != EventKind::Unknown),
        "the sandbox sends only known kinds"
    );
}

#[tokio::test]
async fn drops_split_chunks_and_crlf_lose_and_repeat_nothing() {
    let (s, c) = setup().await;
    let id = c
        .create_session(&MissionSpec::new("Does sleep improve memory?", 1500))
        .await
        .unwrap()
        .session_id;
    let (clean, _) = collect(&c, &id, fast()).await;

    s.knobs().set(|k| k.drop_stream_after = 4);
    let (dropped, updates) = collect(&c, &id, fast()).await;
    assert_eq!(
        ids(&dropped),
        ids(&clean),
        "the same events, in order, once each"
    );
    let reconnects = updates
        .iter()
        .filter(|u| matches!(u, WatchUpdate::Reconnecting { .. }))
        .count();
    assert!(
        reconnects >= clean.len() / 4 - 1,
        "it reconnected ({reconnects} times)"
    );
    s.knobs().clear();

    s.knobs().set(|k| k.tiny_chunks = true);
    s.knobs().set(|k| k.crlf = true);
    let (shaped, _) = collect(&c, &id, fast()).await;
    assert_eq!(
        shaped, clean,
        "byte-level framing does not change a single event"
    );
}

#[tokio::test]
async fn resuming_after_an_id_gives_exactly_what_follows() {
    let (_s, c) = setup().await;
    let id = c
        .create_session(&MissionSpec::new("What drives inflation?", 900))
        .await
        .unwrap()
        .session_id;
    let (all, _) = collect(&c, &id, fast()).await;
    let from = all[6].id.clone();
    let (rest, _) = collect(
        &c,
        &id,
        WatchOptions {
            last_event_id: from,
            ..fast()
        },
    )
    .await;
    assert_eq!(rest, all[7..].to_vec());
}

#[tokio::test]
async fn cancel_is_confirmed_on_the_stream() {
    let (s, c) = setup().await;
    let id = paced(&s, 40).await;
    let watcher = {
        let c = c.clone();
        let id = id.clone();
        tokio::spawn(async move { collect(&c, &id, fast()).await.0 })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let ack = c.cancel(&id, None).await.unwrap();
    assert!(ack.ok);
    assert_eq!(
        (
            ack.session_id.as_deref().unwrap_or(""),
            ack.status.as_deref().unwrap_or("")
        ),
        (id.as_str(), "accepted")
    );
    let events = tokio::time::timeout(Duration::from_secs(20), watcher)
        .await
        .unwrap()
        .unwrap();
    let n = events.len();
    assert_eq!(
        (events[n - 2].kind, events[n - 1].kind),
        (EventKind::TurnCancelled, EventKind::SessionWaiting),
        "turn.cancelled then session.waiting end the stream"
    );
    assert!(
        events.iter().all(|e| e.kind != EventKind::ReportFinal),
        "the turn stopped early"
    );

    assert_eq!(
        c.cancel(&id, None).await.unwrap_err().code(),
        ErrorCode::Conflict,
        "nothing left to cancel"
    );
    assert_eq!(
        c.cancel("ses_nope", None).await.unwrap_err().code(),
        ErrorCode::NotFound
    );
}

#[tokio::test]
async fn auth_and_unknown_sessions_are_not_retried() {
    let (s, _) = setup().await;
    let wrong = InvestigationClient::new(
        Connection::new(s.base_url()).unwrap(),
        ApiKey::parse("nope").unwrap(),
    );
    let err = wrong
        .create_session(&MissionSpec::new("x", 100))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unauthorized);
    let err = wrong.watch("ses_1", fast(), |_| {}).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unauthorized);
    let (_, c) = (s.knobs().clone(), investigation_client(&s));
    assert_eq!(
        c.watch("ses_unknown", fast(), |_| {})
            .await
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );
}

#[tokio::test]
async fn stopping_the_sandbox_ends_open_streams() {
    let (s, c) = setup().await;
    let id = paced(&s, 1000).await;
    let watch = tokio::spawn(async move {
        c.watch(
            &id,
            WatchOptions {
                min_failures: 1,
                give_up_after: Duration::ZERO,
                ..fast()
            },
            |_| {},
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    tokio::time::timeout(Duration::from_secs(5), s.stop())
        .await
        .expect("stop does not wait for open streams");
    let result = tokio::time::timeout(Duration::from_secs(5), watch)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result.unwrap_err().code(), ErrorCode::Network);
}

#[tokio::test]
async fn a_stream_stored_as_it_arrives_reopens_whole() {
    let (s, c) = setup().await;
    s.knobs().set(|k| k.drop_stream_after = 5);
    let store = MissionStore::in_memory().unwrap();
    let spec = MissionSpec::new("Which vaccines reduce transmission?", 3000);
    let session = c.create_session(&spec).await.unwrap();
    store.insert(&session, &spec, s.base_url()).await.unwrap();
    let mut received = Vec::new();
    let store2 = store.clone();
    let sid = session.session_id.clone();
    c.watch(&session.session_id, fast(), |u| {
        if let WatchUpdate::Event { event } = u {
            received.push(event);
        }
    })
    .await
    .unwrap();
    store2.append(&sid, received.clone()).await.unwrap();
    store2.append(&sid, received.clone()).await.unwrap();
    let stored: Vec<MissionEvent> = store
        .events(&sid, 0, 10_000)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event)
        .collect();
    assert_eq!(stored, received, "stored once each, in order");
    let record = store.get(&sid).await.unwrap().unwrap();
    assert_eq!(record.status, MissionStatus::Complete);
    assert_eq!(record.last_event_id, received.last().unwrap().id);
}

#[tokio::test]
async fn ndjson_and_a_post_only_stream_are_followed_too() {
    use axum::http::{StatusCode, header};
    use axum::routing::get;
    let body = "{\"id\":1,\"event\":\"plan\",\"data\":{\"steps\":[\"a\",\"b\"]}}\n{\"id\":2,\"type\":\"mystery.kind\",\"data\":{\"x\":1}}\n{\"id\":3,\"event\":\"session.completed\",\"data\":{}}\n";
    let app = axum::Router::new().route(
        "/eve/v1/session/{id}/stream",
        get(|| async { StatusCode::METHOD_NOT_ALLOWED })
            .post(move || async move { ([(header::CONTENT_TYPE, "application/x-ndjson")], body) }),
    );
    let url = common::serve(app).await;
    let c = InvestigationClient::new(Connection::new(&url).unwrap(), ApiKey::parse("k").unwrap());
    let (events, _) = collect(&c, "ses_x", fast()).await;
    assert_eq!(
        events.iter().map(|e| e.event.as_str()).collect::<Vec<_>>(),
        vec!["plan", "mystery.kind", "session.completed"]
    );
    assert_eq!(
        events[1].kind,
        EventKind::Unknown,
        "an unknown kind is kept, not dropped"
    );
    assert_eq!(events[1].data["x"], 1);
}

#[tokio::test]
async fn extra_create_fields_reach_the_service_and_message_stays_from_the_spec() {
    let (_s, c) = setup().await;
    let mut extra = serde_json::Map::new();
    extra.insert("events".into(), 12.into());
    // A stray "message" in the extras must not replace the spec's message.
    extra.insert("message".into(), "not a mission".into());
    let session = c
        .create_session_with(&MissionSpec::new("Short mission", 500), extra)
        .await
        .unwrap();
    let (events, _) = collect(&c, &session.session_id, fast()).await;
    assert!(
        (10..=14).contains(&events.len()),
        "about 12 events, got {}",
        events.len()
    );
}
