//! The other legal answers the sandbox can give on the investigation stream, where
//! the contract leaves the choice open: which events carry ids and what they look
//! like, the completion event's name, 204 once a session is over, 429 on stream
//! requests, and a stream that falls silent.

mod common;

use common::*;
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

/// The numbers of the `id:` lines of a raw stream body.
fn id_lines(body: &str) -> Vec<&str> {
    body.lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .collect()
}

#[tokio::test]
async fn event_ids_none_sends_no_id_lines() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    let plain = full(&sb, &id).await;
    sb.knobs()
        .set(|k| k.event_ids = casebook_sandbox::EventIds::None);
    let body = raw(&sb, &id).await;
    assert!(!body.lines().any(|l| l.starts_with("id")), "{body:.300}");
    let bare = full(&sb, &id).await;
    assert_eq!(seqs(&bare), seqs(&plain));
    assert!(
        bare.iter().all(|e| e.id.is_empty()),
        "no last event id ever set"
    );
    sb.stop().await;
}

#[tokio::test]
async fn event_ids_some_gives_every_third_event_an_id() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    let plain = full(&sb, &id).await;
    sb.knobs()
        .set(|k| k.event_ids = casebook_sandbox::EventIds::Some);
    let body = raw(&sb, &id).await;
    let expected: Vec<String> = (1..=plain.len() as u64)
        .filter(|n| n % 3 == 0)
        .map(|n| n.to_string())
        .collect();
    assert_eq!(id_lines(&body), expected);

    // Events in between carry the last id over, as WHATWG parsers do, and resuming
    // from it replays the events after the one that had it.
    let events = full(&sb, &id).await;
    assert_eq!(seqs(&events), seqs(&plain));
    assert_eq!(events[4].id, "3");
    let (after, clean) = read_all(&sb, &id, Some(&events[4].id)).await;
    assert!(clean);
    assert_eq!(after[0].seq, 4);
    sb.stop().await;
}

#[tokio::test]
async fn event_ids_opaque_are_tokens_that_still_resume() {
    let sb = sandbox().await;
    sb.knobs()
        .set(|k| k.event_ids = casebook_sandbox::EventIds::Opaque);
    let id = create(&sb, json!({})).await;
    let events = full(&sb, &id).await;
    let tokens: std::collections::HashSet<&str> = events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(tokens.len(), events.len(), "one token an event");
    for e in &events {
        assert!(e.id.parse::<f64>().is_err(), "not a number: {}", e.id);
    }
    let other = create(&sb, json!({})).await;
    let other_events = full(&sb, &other).await;
    assert_ne!(
        other_events[0].id, events[0].id,
        "tokens differ between sessions"
    );

    // Header and query parameter both resume after the event the token names.
    let (after, clean) = read_all(&sb, &id, Some(&events[6].id)).await;
    assert!(clean);
    assert_eq!(seqs(&after), seqs(&events[7..]));
    let resp = client()
        .get(format!(
            "{}/eve/v1/session/{id}/stream?lastEventId={}",
            sb.base_url(),
            events[9].id
        ))
        .bearer_auth(sb.key())
        .send()
        .await
        .unwrap();
    let first = sse(resp).next().await.unwrap().unwrap();
    assert_eq!(first.seq, 11);

    // A token the stream never sent is refused.
    let resp = request(&sb, &id, Some("ev_not-a-token")).await;
    assert_eq!(resp.status(), 400);
    sb.stop().await;
}

#[tokio::test]
async fn opaque_ids_survive_dropped_connections_without_gap_or_duplicate() {
    let sb = sandbox().await;
    sb.knobs()
        .set(|k| k.event_ids = casebook_sandbox::EventIds::Opaque);
    let id = create(&sb, json!({"paceMs": 5, "events": 40})).await;
    sb.knobs().set(|k| k.drop_stream_after = 4);
    let mut got: Vec<Ev> = Vec::new();
    for _ in 0..100 {
        let last = got.last().map(|e| e.id.clone());
        let (events, clean) = read_all(&sb, &id, last.as_deref()).await;
        got.extend(events);
        if clean && got.last().is_some_and(|e| e.kind == "session.completed") {
            break;
        }
    }
    assert_eq!(seqs(&got), (1..=got.len() as u64).collect::<Vec<_>>());
    assert_eq!(kinds(&got).last(), Some(&"session.completed"));
    sb.stop().await;
}

#[tokio::test]
async fn completion_event_renames_the_event_that_ends_a_completed_mission() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    let plain = full(&sb, &id).await;
    assert_eq!(
        set_faults(&sb, json!({"completionEvent": "mission.finished"})).await,
        200
    );
    let renamed = full(&sb, &id).await;
    assert_eq!(renamed.len(), plain.len());
    assert_eq!(renamed.last().unwrap().kind, "mission.finished");
    assert!(!kinds(&renamed).contains(&"session.completed"));
    assert_eq!(renamed.last().unwrap().data, plain.last().unwrap().data);
    assert_eq!(renamed[..plain.len() - 1], plain[..plain.len() - 1]);

    // A cancelled turn still ends with session.waiting.
    let live = create(&sb, json!({"paceMs": 60_000})).await;
    let resp = post_json(&sb, &format!("/eve/v1/session/{live}/cancel"), &json!({})).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        kinds(&full(&sb, &live).await).last(),
        Some(&"session.waiting")
    );

    assert_eq!(set_faults(&sb, json!({"completionEvent": ""})).await, 200);
    assert_eq!(full(&sb, &id).await, plain);
    sb.stop().await;
}

#[tokio::test]
async fn done_status_204_stops_reconnects_once_a_session_is_over() {
    let sb = sandbox().await;
    assert_eq!(set_faults(&sb, json!({"doneStatus204": true})).await, 200);
    let id = create(&sb, json!({})).await;
    // Complete but never streamed: the first request gets the whole turn.
    let events = full(&sb, &id).await;
    assert_eq!(kinds(&events).last(), Some(&"session.completed"));
    for last in [None, Some("3")] {
        let resp = request(&sb, &id, last).await;
        assert_eq!(
            resp.status(),
            204,
            "after the end, with Last-Event-ID {last:?}"
        );
        assert!(resp.bytes().await.unwrap().is_empty());
    }

    // Asking to resume after the last event of a finished session is 204 at once.
    let third = create(&sb, json!({"events": 10})).await;
    tokio::time::timeout(PATIENCE, async {
        // Instant pace: wait for the log to be complete without streaming it.
        loop {
            let resp = post_json(&sb, &format!("/eve/v1/session/{third}/cancel"), &json!({})).await;
            if resp.status() == 409 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap();
    let resp = request(&sb, &third, Some("999")).await;
    assert_eq!(resp.status(), 204);

    // A waiting session (after a cancel) is over too.
    let waiting = create(&sb, json!({"paceMs": 60_000})).await;
    let mut s = sse(request(&sb, &waiting, None).await);
    assert_eq!(s.next().await.unwrap().unwrap().kind, "turn.started");
    let resp = post_json(
        &sb,
        &format!("/eve/v1/session/{waiting}/cancel"),
        &json!({}),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let mut rest = Vec::new();
    while let Some(ev) = tokio::time::timeout(PATIENCE, s.next()).await.unwrap() {
        rest.push(ev.unwrap());
    }
    assert_eq!(kinds(&rest), ["turn.cancelled", "session.waiting"]);
    assert_eq!(request(&sb, &waiting, None).await.status(), 204);

    // An active session still streams; with the variant off, a finished one replays.
    let active = create(&sb, json!({"paceMs": 60_000})).await;
    assert_eq!(request(&sb, &active, None).await.status(), 200);
    sb.knobs().clear();
    assert_eq!(full(&sb, &id).await, events);
    sb.stop().await;
}

#[tokio::test]
async fn stream_429_answers_with_retry_after_in_seconds() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    sb.knobs().set(|k| {
        k.stream_429 = 2;
        k.stream_429_retry_after = Some(3);
    });
    // Other endpoints are not affected.
    let resp = post_json(
        &sb,
        "/citations/v1/parse",
        &json!({"essay": "One paragraph."}),
    )
    .await;
    assert_eq!(resp.status(), 200);
    for _ in 0..2 {
        let resp = request(&sb, &id, None).await;
        assert_eq!(resp.status(), 429);
        assert_eq!(resp.headers()["retry-after"], "3");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "rate_limited");
    }
    let events = full(&sb, &id).await;
    assert_eq!(kinds(&events).last(), Some(&"session.completed"));
    sb.stop().await;
}

/// Seconds since 1970 of an IMF-fixdate such as `Sun, 06 Nov 1994 08:49:37 GMT`.
fn imf_fixdate(s: &str) -> Option<i64> {
    let (day_name, rest) = s.split_once(", ")?;
    if !["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].contains(&day_name) {
        return None;
    }
    let parts: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, clock, "GMT"] = parts[..] else {
        return None;
    };
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = months.iter().position(|m| *m == month)? as u8 + 1;
    let date = time::Date::from_calendar_date(
        year.parse().ok()?,
        time::Month::try_from(month).ok()?,
        day.parse().ok()?,
    )
    .ok()?;
    if day.len() != 2 || clock.len() != 8 {
        return None;
    }
    let hms: Vec<u8> = clock.split(':').filter_map(|n| n.parse().ok()).collect();
    let [h, m, sec] = hms[..] else { return None };
    let at = date.with_hms(h, m, sec).ok()?.assume_utc();
    (at.weekday().to_string()[..3] == *day_name).then_some(at.unix_timestamp())
}

#[tokio::test]
async fn stream_429_can_give_retry_after_as_an_http_date() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    let body = json!({"stream429": 1, "stream429RetryAfter": 30, "stream429RetryAfterDate": true});
    assert_eq!(set_faults(&sb, body).await, 200);
    let before = time::OffsetDateTime::now_utc().unix_timestamp();
    let resp = request(&sb, &id, None).await;
    assert_eq!(resp.status(), 429);
    let date = resp.headers()["retry-after"].to_str().unwrap().to_owned();
    let at = imf_fixdate(&date).unwrap_or_else(|| panic!("not an HTTP date: {date:?}"));
    // Generous bounds: the date stands for "30 s from when it was sent".
    assert!(
        at >= before + 29 && at <= before + 120,
        "{date} vs now {before}"
    );
    assert_eq!(request(&sb, &id, None).await.status(), 200);
    sb.stop().await;
}

#[tokio::test]
async fn silence_sends_nothing_after_k_events_then_carries_on() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    let plain = full(&sb, &id).await;

    // A long silence: the whole log is ready, yet after 3 events not a byte comes.
    sb.knobs().set(|k| {
        k.silence_after = 3;
        k.silence_ms = 60_000;
    });
    let resp = request(&sb, &id, None).await;
    let mut body = resp.bytes_stream();
    let mut text = String::new();
    while text.matches("\n\n").count() < 4 {
        let chunk = tokio::time::timeout(PATIENCE, body.next()).await.unwrap();
        text.push_str(&String::from_utf8_lossy(&chunk.unwrap().unwrap()));
    }
    assert!(text.starts_with("retry: 1000\n\nid: 1\n"), "{text}");
    assert!(
        text.ends_with("\n\n") && text.contains("id: 3\n") && !text.contains("id: 4\n"),
        "{text}"
    );
    let next = tokio::time::timeout(Duration::from_secs(1), body.next()).await;
    assert!(next.is_err(), "bytes during the silence: {next:?}");
    drop(body);

    // A short one, set over HTTP: the stream then carries on to the same end, with no
    // keep-alive comment in the gap.
    assert_eq!(
        set_faults(&sb, json!({"silenceMs": 200, "silenceAfter": 5})).await,
        200
    );
    assert_eq!(full(&sb, &id).await, plain);
    let body = raw(&sb, &id).await;
    assert!(!body.contains(": keep-alive"), "{body:.200}");
    assert_eq!(id_lines(&body).len(), plain.len());
    sb.stop().await;
}

#[tokio::test]
async fn variants_are_set_and_refused_over_http_and_cleared() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    let everything = json!({
        "eventIds": "opaque",
        "completionEvent": "mission.finished",
        "doneStatus204": false,
        "stream429": 0,
        "stream429RetryAfter": 2,
        "stream429RetryAfterDate": false,
        "silenceMs": 0,
        "silenceAfter": 0,
        "parseShape": "alternate",
        "successStatus": 202,
        "htmlErrors": true,
    });
    assert_eq!(set_faults(&sb, everything).await, 200);
    let body = raw(&sb, &id).await;
    assert!(
        id_lines(&body).iter().all(|i| i.starts_with("ev_")),
        "{body:.200}"
    );
    assert!(body.contains("event: mission.finished\n"));

    for bad in [
        json!({"eventIds": "most"}),
        json!({"parseShape": "xml"}),
        json!({"successStatus": 204}),
        json!({"silenceAfter": 3}),
        json!({"stream429RetryAfter": 3}),
        json!({"eventIDs": "all"}),
    ] {
        assert_eq!(set_faults(&sb, bad.clone()).await, 400, "{bad}");
    }
    // A refused request changed nothing.
    assert!(raw(&sb, &id).await.contains("event: mission.finished\n"));

    assert_eq!(set_faults(&sb, json!({"clear": true})).await, 200);
    let body = raw(&sb, &id).await;
    assert_eq!(id_lines(&body)[0], "1");
    assert!(body.contains("event: session.completed\n"));
    sb.stop().await;
}
