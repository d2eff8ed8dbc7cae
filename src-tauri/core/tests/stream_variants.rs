//! `InvestigationClient::watch` against small servers that send exactly the byte streams a
//! real server may legally send but the sandbox does not: events without ids, opaque ids, a
//! completion event of another name, 204, 429 on the stream, silence, storms and drops.

mod common;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use casebook_core::ErrorCode;
use casebook_core::keys::ApiKey;
use casebook_core::missions::client::InvestigationClient;
use casebook_core::missions::protocol::MissionEvent;
use casebook_core::missions::stream::{WatchEnd, WatchEndReason, WatchOptions, WatchUpdate};
use casebook_core::net::connection::Connection;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// What one connection to the stream gets.
#[derive(Clone)]
enum Reply {
    /// 200 `text/event-stream` with this body, then a clean end.
    Sse(&'static str),
    /// 200 `application/x-ndjson` with this body, then a clean end.
    Ndjson(String),
    /// 200, this body, then the connection breaks (no clean end of the body).
    SseThenBreak(&'static str),
    /// 200, this body, then nothing more while the connection stays open.
    SseThenSilence(&'static str),
    /// A bare status.
    Status(u16),
    /// 429 with `Retry-After` in seconds.
    RetryAfterSecs(u64),
    /// 429 with `Retry-After` as the HTTP date this many seconds from now.
    RetryAfterDate(u64),
}

struct Script {
    replies: Vec<Reply>,
    /// The `Last-Event-ID` of each request, in order.
    requests: Mutex<Vec<Option<String>>>,
}

impl Script {
    fn requests(&self) -> Vec<Option<String>> {
        self.requests.lock().unwrap().clone()
    }
}

fn sse(body: impl Into<Body>) -> Response {
    ([(header::CONTENT_TYPE, "text/event-stream")], body.into()).into_response()
}

async fn stream(State(script): State<Arc<Script>>, headers: HeaderMap) -> Response {
    let n = {
        let mut requests = script.requests.lock().unwrap();
        requests.push(
            headers
                .get("last-event-id")
                .map(|v| v.to_str().unwrap().to_owned()),
        );
        requests.len() - 1
    };
    let reply = script.replies[n.min(script.replies.len() - 1)].clone();
    match reply {
        Reply::Sse(body) => sse(body),
        Reply::Ndjson(body) => {
            ([(header::CONTENT_TYPE, "application/x-ndjson")], body).into_response()
        }
        Reply::SseThenBreak(body) => {
            let first = futures_util::stream::once(async move {
                Ok(bytes::Bytes::from_static(body.as_bytes()))
            });
            // The pause lets the head and first bytes go out before the connection breaks.
            let broken = futures_util::stream::once(async {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Err(std::io::Error::other("dropped"))
            });
            sse(Body::from_stream(futures_util::StreamExt::chain(
                first, broken,
            )))
        }
        Reply::SseThenSilence(body) => {
            let first = futures_util::stream::once(async move {
                Ok::<_, std::io::Error>(bytes::Bytes::from_static(body.as_bytes()))
            });
            sse(Body::from_stream(futures_util::StreamExt::chain(
                first,
                futures_util::stream::pending(),
            )))
        }
        Reply::Status(code) => StatusCode::from_u16(code).unwrap().into_response(),
        Reply::RetryAfterSecs(secs) => (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, secs.to_string())],
        )
            .into_response(),
        Reply::RetryAfterDate(secs) => (
            StatusCode::TOO_MANY_REQUESTS,
            [(
                header::RETRY_AFTER,
                httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(secs)),
            )],
        )
            .into_response(),
    }
}

async fn serve(replies: Vec<Reply>) -> (InvestigationClient, Arc<Script>) {
    let script = Arc::new(Script {
        replies,
        requests: Mutex::default(),
    });
    let app = axum::Router::new()
        .route("/eve/v1/session/{id}/stream", axum::routing::get(stream))
        .with_state(script.clone());
    let url = common::serve(app).await;
    let client =
        InvestigationClient::new(Connection::new(&url).unwrap(), ApiKey::parse("k").unwrap());
    (client, script)
}

/// Timings small enough for tests.
fn quick() -> WatchOptions {
    WatchOptions {
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(20),
        give_up_after: Duration::from_millis(200),
        min_failures: 3,
        max_server_retry: Duration::from_millis(300),
        idle_timeout: Duration::from_secs(5),
        ..WatchOptions::default()
    }
}

struct Watched {
    result: casebook_core::Result<WatchEnd>,
    events: Vec<MissionEvent>,
    updates: Vec<WatchUpdate>,
}

async fn watch(c: &InvestigationClient, options: WatchOptions) -> Watched {
    let mut events = Vec::new();
    let mut updates = Vec::new();
    let result = tokio::time::timeout(
        Duration::from_secs(20),
        c.watch("ses_1", options, |u| match u {
            WatchUpdate::Event { event } => events.push(event),
            u => updates.push(u),
        }),
    )
    .await
    .expect("the watch ends");
    Watched {
        result,
        events,
        updates,
    }
}

fn names(events: &[MissionEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| format!("{}:{}", e.event, e.data))
        .collect()
}

fn ids(events: &[MissionEvent]) -> Vec<Option<&str>> {
    events.iter().map(|e| e.id.as_deref()).collect()
}

fn event(name: &str, data: &str) -> MissionEvent {
    MissionEvent::new(None, name.into(), data)
}

#[tokio::test]
async fn events_without_their_own_id_are_delivered() {
    let (c, _) = serve(vec![Reply::Sse(
        "event: a\ndata: 1\n\nid: 5\nevent: b\ndata: 2\n\nevent: c\ndata: 3\n\nevent: c\ndata: 3\n\nevent: session.waiting\ndata: {}\n\n",
    )])
    .await;
    let w = watch(&c, quick()).await;
    assert_eq!(
        names(&w.events),
        ["a:1", "b:2", "c:3", "c:3", "session.waiting:{}"],
        "two identical events in one connection are two events"
    );
    assert_eq!(
        ids(&w.events),
        [None, Some("5"), None, None, None],
        "an event carries only an id the server put on it"
    );
    let end = w.result.unwrap();
    assert_eq!(end.last_event_id.as_deref(), Some("5"));
    assert!(matches!(end.reason, WatchEndReason::Terminal(ref e) if e.event == "session.waiting"));
}

#[tokio::test]
async fn opaque_ids_resume_and_the_replayed_id_less_tail_is_skipped() {
    let (c, script) = serve(vec![
        Reply::Sse("id: abc/=+\nevent: x\ndata: 1\n\nevent: y\ndata: 2\n\n"),
        // Replays what followed the id, then goes on.
        Reply::Sse(
            "event: y\ndata: 2\n\nid: zz-9\nevent: z\ndata: 3\n\nevent: session.waiting\ndata: {}\n\n",
        ),
    ])
    .await;
    let w = watch(&c, quick()).await;
    assert_eq!(
        names(&w.events),
        ["x:1", "y:2", "z:3", "session.waiting:{}"]
    );
    assert_eq!(script.requests(), [None, Some("abc/=+".into())]);
    assert_eq!(w.result.unwrap().last_event_id.as_deref(), Some("zz-9"));
}

#[tokio::test]
async fn a_server_without_ids_that_replays_from_the_start_shows_nothing_twice() {
    let (c, script) = serve(vec![
        Reply::Sse("event: a\ndata: 1\n\nevent: b\ndata: 2\n\nevent: b\ndata: 2\n\n"),
        Reply::SseThenBreak("event: a\ndata: 1\n\nevent: b\ndata: 2\n\n"),
        Reply::Sse(
            "event: a\ndata: 1\n\nevent: b\ndata: 2\n\nevent: b\ndata: 2\n\nevent: b\ndata: 2\n\nevent: c\ndata: 3\n\nevent: session.waiting\ndata: {}\n\n",
        ),
    ])
    .await;
    let w = watch(&c, quick()).await;
    assert_eq!(
        names(&w.events),
        ["a:1", "b:2", "b:2", "b:2", "c:3", "session.waiting:{}"],
        "the replayed prefix is skipped, the rest (even a third b) is new"
    );
    assert_eq!(script.requests(), [None, None, None]);
}

#[tokio::test]
async fn a_replay_from_the_start_with_some_ids_skips_what_came_before() {
    let (c, _) = serve(vec![
        Reply::Sse("id: 1\nevent: a\ndata: 1\n\nevent: b\ndata: 2\n\nid: 2\nevent: c\ndata: 3\n\nevent: d\ndata: 4\n\n"),
        // Ignores Last-Event-ID and starts over.
        Reply::Sse(
            "id: 1\nevent: a\ndata: 1\n\nevent: b\ndata: 2\n\nid: 2\nevent: c\ndata: 3\n\nevent: d\ndata: 4\n\nevent: e\ndata: 5\n\nevent: session.waiting\ndata: {}\n\n",
        ),
    ])
    .await;
    let w = watch(&c, quick()).await;
    assert_eq!(
        names(&w.events),
        ["a:1", "b:2", "c:3", "d:4", "e:5", "session.waiting:{}"]
    );
}

#[tokio::test]
async fn the_replay_skip_works_across_an_app_restart() {
    let (c, script) = serve(vec![Reply::Sse(
        "event: b\ndata: 2\n\nevent: c\ndata: {\"n\":3}\n\nevent: d\ndata: 4\n\nevent: session.waiting\ndata: {}\n\n",
    )])
    .await;
    let w = watch(
        &c,
        WatchOptions {
            last_event_id: Some("7".into()),
            received_after_last_id: vec![event("b", "2"), event("c", "{\"n\":3}")],
            ..quick()
        },
    )
    .await;
    assert_eq!(names(&w.events), ["d:4", "session.waiting:{}"]);
    assert_eq!(script.requests(), [Some("7".into())]);
}

#[tokio::test]
async fn ndjson_without_ids_is_deduplicated_the_same_way() {
    let (c, _) = serve(vec![
        Reply::Ndjson("{\"event\":\"a\",\"data\":1}\n".into()),
        Reply::Ndjson(
            "{\"event\":\"a\",\"data\":1}\n{\"event\":\"b\",\"data\":2}\n{\"event\":\"session.waiting\",\"data\":{}}\n"
                .into(),
        ),
    ])
    .await;
    let w = watch(&c, quick()).await;
    assert_eq!(names(&w.events), ["a:1", "b:2", "session.waiting:{}"]);
}

#[tokio::test]
async fn a_completion_of_another_name_then_204_ends_cleanly() {
    let (c, script) = serve(vec![
        Reply::Sse("id: 1\nevent: mission.finished\ndata: {\"ok\":true}\n\n"),
        Reply::Status(204),
    ])
    .await;
    let w = watch(&c, quick()).await;
    let end = w.result.unwrap();
    assert_eq!(end.reason, WatchEndReason::ServerDone);
    assert_eq!(end.last_event_id.as_deref(), Some("1"));
    assert_eq!(names(&w.events), ["mission.finished:{\"ok\":true}"]);
    assert_eq!(script.requests(), [None, Some("1".into())]);
}

/// Watches until the server has answered `n` stream requests, and says whether the
/// watch was still going then (it is stopped), with the events it had.
async fn still_watching_after(
    c: &InvestigationClient,
    script: &Script,
    n: usize,
) -> (bool, Vec<MissionEvent>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let c = c.clone();
    let task = tokio::spawn(async move {
        c.watch("ses_1", quick(), move |u| {
            if let WatchUpdate::Event { event } = u {
                seen.lock().unwrap().push(event);
            }
        })
        .await
    });
    let asked = tokio::time::timeout(Duration::from_secs(20), async {
        while script.requests().len() < n && !task.is_finished() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(asked.is_ok(), "the server was not asked {n} times");
    let going = !task.is_finished();
    task.abort();
    let events = events.lock().unwrap().clone();
    (going, events)
}

#[tokio::test]
async fn a_stream_that_keeps_ending_with_nothing_new_is_cut_never_finished() {
    // With ids: the server resumes after the id and has nothing more, again and again.
    let (c, script) = serve(vec![
        Reply::Sse("id: 1\nevent: report\ndata: {}\n\n"),
        Reply::Sse(": nothing more\n\n"),
    ])
    .await;
    let (going, events) = still_watching_after(&c, &script, 6).await;
    assert!(
        going,
        "a stream that ends with no record saying so ended the watch"
    );
    assert_eq!(names(&events), ["report:{}"]);

    // Without ids: the server replays everything and has nothing more.
    let (c, script) = serve(vec![Reply::Sse(
        "event: a\ndata: 1\n\nevent: done.for.now\ndata: 2\n\n",
    )])
    .await;
    let (going, events) = still_watching_after(&c, &script, 6).await;
    assert!(going);
    assert_eq!(names(&events), ["a:1", "done.for.now:2"]);
}

#[tokio::test]
async fn a_body_that_stops_inside_a_record_is_a_cut_resumed_from_the_cursor() {
    // A `Content-Length` shorter than the first record: the body ends, cleanly, inside it.
    let (c, script) = serve(vec![
        Reply::Sse("id: 1\nevent: a\ndata: 1\n\nid: 2\nevent: session.wai"),
        Reply::Sse("id: 2\nevent: session.waiting\ndata: {}\n\n"),
    ])
    .await;
    let w = watch(&c, quick()).await;
    assert!(w.result.unwrap().terminal().is_some());
    assert_eq!(names(&w.events), ["a:1", "session.waiting:{}"]);
    assert_eq!(script.requests(), [None, Some("1".into())]);

    // NDJSON: a line without its newline is not a record, even when it is whole JSON.
    let (c, script) = serve(vec![
        Reply::Ndjson(
            "{\"event\":\"a\",\"data\":1}\n{\"event\":\"session.waiting\",\"data\":{}}".into(),
        ),
        Reply::Ndjson(
            "{\"event\":\"a\",\"data\":1}\n{\"event\":\"session.waiting\",\"data\":{}}\n".into(),
        ),
    ])
    .await;
    let w = watch(&c, quick()).await;
    assert!(w.result.unwrap().terminal().is_some());
    assert_eq!(names(&w.events), ["a:1", "session.waiting:{}"]);
    assert_eq!(script.requests().len(), 2);

    // A server that always stops inside a record never finishes the mission, and
    // nothing past the cut is taken.
    let (c, script) = serve(vec![Reply::Sse(
        "id: 1\nevent: a\ndata: 1\n\nevent: session.waiting\ndata: {",
    )])
    .await;
    let (going, events) = still_watching_after(&c, &script, 6).await;
    assert!(going);
    assert_eq!(names(&events), ["a:1"]);
    assert!(
        script.requests()[1..]
            .iter()
            .all(|r| r.as_deref() == Some("1"))
    );
}

#[tokio::test]
async fn a_429_on_the_stream_waits_its_retry_after_and_is_no_failure() {
    let (c, script) = serve(vec![
        Reply::RetryAfterSecs(1),
        Reply::RetryAfterDate(2),
        Reply::Sse("event: session.waiting\ndata: {}\n\n"),
    ])
    .await;
    let started = Instant::now();
    // One failure would be enough to give up, so a 429 that counted would end the watch.
    let w = watch(
        &c,
        WatchOptions {
            min_failures: 1,
            give_up_after: Duration::ZERO,
            max_server_retry: Duration::from_secs(5),
            ..quick()
        },
    )
    .await;
    let waited = started.elapsed();
    assert!(w.result.is_ok(), "{:?}", w.result);
    assert_eq!(script.requests().len(), 3);
    // An HTTP date has whole seconds, so "2 s from now" may be a little over 1 s away.
    assert!(waited >= Duration::from_millis(1900), "{waited:?}");
    let waits: Vec<u64> = w
        .updates
        .iter()
        .filter_map(|u| match u {
            WatchUpdate::Reconnecting { after_ms, .. } => Some(*after_ms),
            _ => None,
        })
        .collect();
    assert_eq!(waits.len(), 2);
    assert_eq!(waits[0], 1000);
    assert!((900..=2000).contains(&waits[1]), "{waits:?}");
}

#[tokio::test]
async fn a_retry_after_beyond_the_cap_is_a_rate_limited_error() {
    let (c, _) = serve(vec![Reply::RetryAfterSecs(3600)]).await;
    let err = watch(&c, quick()).await.result.unwrap_err();
    assert_eq!(err.code(), ErrorCode::RateLimited, "{}", err.message());
    assert_eq!(err.retry_after_secs(), Some(3600));
}

#[tokio::test]
async fn a_5xx_storm_gives_up_after_the_time_and_the_tries() {
    let (c, script) = serve(vec![Reply::Status(503)]).await;
    let started = Instant::now();
    let err = watch(&c, quick()).await.result.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Network, "{}", err.message());
    assert!(err.message().contains("lost"), "{}", err.message());
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(script.requests().len() >= 3);
}

#[tokio::test]
async fn a_refused_connection_gives_up_with_a_network_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let c = InvestigationClient::new(
        Connection::new(&format!("http://127.0.0.1:{port}")).unwrap(),
        ApiKey::parse("k").unwrap(),
    );
    let err = watch(&c, quick()).await.result.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Network, "{}", err.message());
    assert!(err.message().contains("lost"), "{}", err.message());
}

/// A server that keeps accepting and dropping with nothing new (a comment, then the
/// cut): fewer such connections in a row than `max_empty_reconnects` are ridden out; at
/// the bound the watch stops, saying why, instead of asking again for ever.
#[tokio::test]
async fn a_server_that_keeps_accepting_and_dropping_is_given_up_after_the_empty_tries() {
    let tries = quick().max_empty_reconnects as usize;
    let mut replies = vec![Reply::SseThenBreak(": hello\n\n"); tries - 1];
    replies.push(Reply::Sse("event: session.waiting\ndata: {}\n\n"));
    let (c, script) = serve(replies).await;
    let w = watch(&c, quick()).await;
    assert!(w.result.is_ok(), "{:?}", w.result);
    assert_eq!(script.requests().len(), tries);

    let mut replies = vec![Reply::SseThenBreak(": hello\n\n"); 30];
    replies.push(Reply::Sse("event: session.waiting\ndata: {}\n\n"));
    let (c, script) = serve(replies).await;
    let err = watch(&c, quick()).await.result.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Network, "{}", err.message());
    assert!(
        err.message().contains("keeps ending the mission's stream"),
        "{}",
        err.message()
    );
    assert_eq!(script.requests().len(), tries);
}

#[tokio::test]
async fn a_silent_connection_is_reopened_after_the_idle_timeout() {
    let (c, script) = serve(vec![
        Reply::SseThenSilence("id: 1\nevent: a\ndata: 1\n\n"),
        Reply::Sse("event: session.waiting\ndata: {}\n\n"),
    ])
    .await;
    let w = watch(
        &c,
        WatchOptions {
            idle_timeout: Duration::from_millis(200),
            ..quick()
        },
    )
    .await;
    assert!(w.result.is_ok(), "{:?}", w.result);
    assert_eq!(names(&w.events), ["a:1", "session.waiting:{}"]);
    assert_eq!(script.requests(), [None, Some("1".into())]);
}

#[tokio::test]
async fn a_servers_retry_is_honoured_up_to_the_cap() {
    let (c, _) = serve(vec![
        Reply::Sse("retry: 600000\nid: 1\nevent: a\ndata: 1\n\n"),
        Reply::Sse("event: session.waiting\ndata: {}\n\n"),
    ])
    .await;
    let started = Instant::now();
    let w = watch(&c, quick()).await;
    assert!(w.result.is_ok(), "{:?}", w.result);
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(
        w.updates
            .iter()
            .any(|u| matches!(u, WatchUpdate::Reconnecting { after_ms: 300, .. })),
        "{:?}",
        w.updates
    );
}

#[tokio::test]
async fn an_endless_line_is_a_protocol_error() {
    static BIG: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!("event: a\ndata: 1\n\ndata: {}", "x".repeat(4_100_000))
    });
    let (c, _) = serve(vec![Reply::Sse(BIG.as_str())]).await;
    let w = watch(&c, quick()).await;
    let err = w.result.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Protocol, "{}", err.message());
    assert_eq!(names(&w.events), ["a:1"], "what came before is delivered");

    let (c, _) = serve(vec![Reply::Ndjson(format!(
        "{{\"event\":\"a\",\"data\":\"{}\"}}\n",
        "x".repeat(4_100_000)
    ))])
    .await;
    let err = watch(&c, quick()).await.result.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Protocol, "{}", err.message());
}
