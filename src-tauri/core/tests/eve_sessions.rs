//! The investigation client against the sandbox speaking eve, in each of eve's three wire
//! generations, over loopback HTTP: streams resumed by `?startIndex=` (asserted from the
//! sandbox's own log of what each request asked), leases, restarts, multi-turn sessions,
//! replies with and without continuation tokens, questions, cancel.

mod common;

use casebook_core::ErrorCode;
use casebook_core::missions::client::{
    Dialect, FollowUp, InputResponse, InvestigationClient, MissionSpec,
};
use casebook_core::missions::conversation::{Conversation, StepStatus};
use casebook_core::missions::follower::{Follower, Quiet};
use casebook_core::missions::protocol::{self, MissionEvent};
use casebook_core::missions::store::{MissionStatus, MissionStore};
use casebook_core::missions::stream::{WatchEnd, WatchEndReason, WatchOptions, WatchUpdate};
use casebook_sandbox::{MissionProtocol, Pace, RunningSandbox, SandboxConfig, start};
use common::investigation_client;
use std::sync::Arc;
use std::time::Duration;

const GENERATIONS: [MissionProtocol; 3] = [
    MissionProtocol::EveA,
    MissionProtocol::EveB,
    MissionProtocol::Eve27,
];

/// How a follow-up is sent to the sandbox speaking `g`: the stream version it names.
fn dialect(g: MissionProtocol) -> Dialect {
    Dialect::of_stream(Some(match g {
        MissionProtocol::EveA => 21,
        MissionProtocol::EveB => 26,
        _ => 27,
    }))
}

async fn sandbox(protocol: MissionProtocol) -> (RunningSandbox, InvestigationClient) {
    let s = start(SandboxConfig {
        pace: Pace::Instant,
        mission_protocol: protocol,
        ..Default::default()
    })
    .await
    .unwrap();
    let c = client(&s);
    (s, c)
}

fn client(s: &RunningSandbox) -> InvestigationClient {
    investigation_client(s)
}

fn fast() -> WatchOptions {
    WatchOptions {
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(200),
        ..Default::default()
    }
}

/// Starts a mission with the sandbox's `events` and `paceMs` extensions.
async fn mission(c: &InvestigationClient, objective: &str, events: u64, pace_ms: u64) -> String {
    let mut extra = serde_json::Map::new();
    extra.insert("events".into(), events.into());
    extra.insert("paceMs".into(), pace_ms.into());
    c.create_session_with(&MissionSpec::new(objective, 2500), extra)
        .await
        .unwrap()
        .session_id
}

/// What one watch saw: new events, cursor positions, reconnects.
#[derive(Default)]
struct Seen {
    events: Vec<MissionEvent>,
    /// The cursor when each reconnect began: what the next request must ask for.
    cursor_at_reconnect: Vec<u64>,
    cursor: u64,
}

async fn watch(c: &InvestigationClient, id: &str, opts: WatchOptions) -> (Seen, WatchEnd) {
    let mut seen = Seen {
        cursor: opts.start_index.unwrap_or(0),
        ..Default::default()
    };
    let end = c
        .watch(id, opts, |u| match u {
            WatchUpdate::Event { event } => seen.events.push(event),
            WatchUpdate::Position { next } => seen.cursor = next,
            WatchUpdate::Reconnecting { .. } => seen.cursor_at_reconnect.push(seen.cursor),
            WatchUpdate::Connected { .. } => {}
        })
        .await
        .unwrap();
    (seen, end)
}

/// Every record of the session as a fresh reader gets it (names and data).
async fn whole(c: &InvestigationClient, id: &str) -> Vec<(String, serde_json::Value)> {
    let (seen, _) = watch(c, id, fast()).await;
    seen.events.into_iter().map(|e| (e.event, e.data)).collect()
}

fn names(events: &[MissionEvent]) -> Vec<&str> {
    events.iter().map(|e| e.event.as_str()).collect()
}

fn status_of(events: &[MissionEvent]) -> MissionStatus {
    events
        .iter()
        .fold(MissionStatus::Running, |s, e| s.after(&protocol::read(e)))
}

#[tokio::test]
async fn a_mission_streams_to_its_wait_in_each_generation() {
    for g in GENERATIONS {
        let (s, c) = sandbox(g).await;
        let session = c
            .create_session(&MissionSpec::new("Does urban heat raise admissions?", 2500))
            .await
            .unwrap();
        assert_eq!(
            session.continuation_token.is_some(),
            g == MissionProtocol::EveA,
            "{g:?}: only generation A hands out a token"
        );
        let (seen, end) = watch(&c, &session.session_id, fast()).await;
        let WatchEndReason::Terminal(last) = &end.reason else {
            panic!("{g:?}: ended {:?}", end.reason)
        };
        assert_eq!(
            last.event,
            if g == MissionProtocol::Eve27 {
                "turn.settled"
            } else {
                "session.waiting"
            },
            "{g:?}"
        );
        assert_eq!(status_of(&seen.events), MissionStatus::Waiting, "{g:?}");
        // No transport record, no blank line is an event.
        assert!(
            seen.events
                .iter()
                .all(|e| !e.event.starts_with('$') && !e.event.is_empty()),
            "{g:?}"
        );
        let c_ = Conversation::from_events(&seen.events);
        let report = c_.last_reply().expect("a report");
        assert!(report.text.len() > 40, "{g:?}: {report:?}");
        // The cursor counted every stored line, and the first request asked for the tail.
        let asked = s.stream_requests(&session.session_id);
        assert_eq!(asked.len(), 1, "{g:?}: {asked:?}");
        assert_eq!(asked[0].start_index, None);
        assert!(asked[0].include_tail_index);
        s.stop().await;
    }
}

/// The figure: a 1,000-record mission cut 10 times makes 11 stream requests, each
/// asking for exactly the records not yet read, and not one record comes twice.
#[tokio::test]
async fn ten_cuts_make_eleven_requests_with_the_right_start_index_and_no_replay() {
    for g in GENERATIONS {
        let (s, c) = sandbox(g).await;
        let id = mission(&c, "Does urban heat raise admissions?", 1000, 0).await;
        // Let the whole mission be written, so the cuts fall in the replay too.
        tokio::time::sleep(Duration::from_millis(300)).await;
        s.knobs().set(|k| {
            k.cut_random = casebook_sandbox::knobs::CutRandom {
                seed: 42,
                count: 10,
            }
        });
        let (seen, end) = watch(&c, &id, fast()).await;
        assert!(matches!(end.reason, WatchEndReason::Terminal(_)), "{g:?}");
        let asked = s.stream_requests(&id);
        let starts: Vec<_> = asked.iter().map(|r| r.start_index).collect();
        let want: Vec<_> = std::iter::once(None)
            .chain(seen.cursor_at_reconnect.iter().map(|n| Some(*n as i64)))
            .collect();
        println!(
            "{g:?}: {} records, {} stream requests, startIndex {:?}",
            seen.events.len(),
            asked.len(),
            starts
        );
        assert_eq!(asked.len(), 11, "{g:?}: {starts:?}");
        assert_eq!(starts, want, "{g:?}: each reconnect asks for what was read");
        // Nothing replayed, nothing lost: the same records as one clean read.
        let clean = whole(&c, &id).await;
        let got: Vec<_> = seen
            .events
            .iter()
            .map(|e| (e.event.clone(), e.data.clone()))
            .collect();
        assert_eq!(got.len(), clean.len(), "{g:?}: replayed or lost records");
        assert_eq!(got, clean, "{g:?}");
        s.stop().await;
    }
}

/// A server that ignores `startIndex` and replays from the start after each cut: the
/// records it sends again are recognised and skipped, and the cursor is counted from the
/// replay, so each later request still asks for exactly what was read.
#[tokio::test]
async fn a_server_that_ignores_start_index_still_shows_each_record_once() {
    for g in GENERATIONS {
        let (s, c) = sandbox(g).await;
        let id = mission(&c, "Does urban heat raise admissions?", 300, 0).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        s.knobs().set(|k| k.ignore_start_index = true);
        s.knobs()
            .set(|k| k.cut_random = casebook_sandbox::knobs::CutRandom { seed: 7, count: 4 });
        let (seen, end) = watch(&c, &id, fast()).await;
        assert!(matches!(end.reason, WatchEndReason::Terminal(_)), "{g:?}");
        let asked: Vec<_> = s
            .stream_requests(&id)
            .iter()
            .map(|r| r.start_index)
            .collect();
        let want: Vec<_> = std::iter::once(None)
            .chain(seen.cursor_at_reconnect.iter().map(|n| Some(*n as i64)))
            .collect();
        assert_eq!(asked, want, "{g:?}: the cursor stays true through replays");
        s.knobs().set(|k| k.ignore_start_index = false);
        let clean = whole(&c, &id).await;
        let got: Vec<_> = seen
            .events
            .iter()
            .map(|e| (e.event.clone(), e.data.clone()))
            .collect();
        assert_eq!(got, clean, "{g:?}: nothing twice, nothing lost");
        s.stop().await;
    }
}

#[tokio::test]
async fn a_lease_end_reconnects_at_once_without_replay() {
    for g in [MissionProtocol::EveB, MissionProtocol::Eve27] {
        let (s, c) = sandbox(g).await;
        s.knobs().set(|k| k.lease_seconds = Some(1));
        // Several seconds of records (deltas play faster than the pace).
        let id = mission(&c, "Does urban heat raise admissions?", 250, 40).await;
        let (seen, _) = watch(&c, &id, fast()).await;
        let asked = s.stream_requests(&id);
        assert!(
            asked.len() >= 3,
            "{g:?}: leases of 1 s end responses: {asked:?}"
        );
        for (r, cursor) in asked[1..].iter().zip(&seen.cursor_at_reconnect) {
            assert_eq!(r.start_index, Some(*cursor as i64), "{g:?}");
        }
        let clean = whole(&c, &id).await;
        assert_eq!(
            seen.events.len(),
            clean.len(),
            "{g:?}: no replay after a lease"
        );
        s.stop().await;
    }
}

#[tokio::test]
async fn a_just_created_sessions_stream_is_retried_and_an_unknown_one_fails_after_a_few_tries() {
    let (s, c) = sandbox(MissionProtocol::EveB).await;
    let id = mission(&c, "Does urban heat raise admissions?", 60, 0).await;
    s.knobs().set(|k| k.stream_404 = 3);
    let opts = WatchOptions {
        just_created: true,
        ..fast()
    };
    let (seen, end) = watch(&c, &id, opts).await;
    assert!(matches!(end.reason, WatchEndReason::Terminal(_)));
    assert!(!seen.events.is_empty());
    assert_eq!(
        seen.cursor_at_reconnect.len(),
        3,
        "three 404s, then the stream"
    );
    // A session the service does not know, watched from elsewhere: a few tries, then
    // the service's own words.
    let err = c.watch("ses_unknown", fast(), |_| {}).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert!(
        err.message().contains("Session not found"),
        "{}",
        err.message()
    );
    s.stop().await;
}

/// Three turns, then a watcher that starts from nothing: it reads the whole log and
/// stops at the third turn's end, not at the first `session.waiting` it meets.
#[tokio::test]
async fn a_three_turn_session_watched_afresh_stops_at_its_newest_turn() {
    for g in GENERATIONS {
        three_turns_watched_afresh(g, true).await;
    }
}

/// The same against servers that give no tail index (eve before 0.27.7): the newest
/// turn's end is the one nothing follows.
#[tokio::test]
async fn without_a_tail_index_a_fresh_watch_still_stops_at_the_newest_turn() {
    for g in GENERATIONS {
        three_turns_watched_afresh(g, false).await;
    }
}

async fn three_turns_watched_afresh(g: MissionProtocol, tail_index: bool) {
    {
        let (s, c) = sandbox(g).await;
        s.knobs().set(|k| k.no_tail_index = !tail_index);
        let id = mission(&c, "Does urban heat raise admissions?", 40, 0).await;
        let (first, _) = watch(&c, &id, fast()).await;
        let mut token = first
            .events
            .iter()
            .rev()
            .find(|e| e.event == "session.waiting")
            .and_then(|e| e.data["continuationToken"].as_str().map(str::to_owned));
        let mut cursor = first.cursor;
        for reply in ["And in Europe?", "Thank you."] {
            c.follow_up(
                &id,
                &FollowUp::Message(reply.into()),
                token.as_deref(),
                dialect(g),
            )
            .await
            .unwrap();
            let opts = WatchOptions {
                start_index: Some(cursor),
                ..fast()
            };
            let (turn, end) = watch(&c, &id, opts).await;
            assert!(
                matches!(end.reason, WatchEndReason::Terminal(_)),
                "{g:?}: the reply's turn ends"
            );
            assert!(
                names(&turn.events)
                    .iter()
                    .any(|n| *n == "message.received" || *n == "delivery.consumed"),
                "{g:?}: the reply is in its turn: {:?}",
                names(&turn.events)
            );
            cursor = turn.cursor;
            if let Some(t) = turn
                .events
                .iter()
                .rev()
                .find(|e| e.event == "session.waiting")
                .and_then(|e| e.data["continuationToken"].as_str())
                .filter(|t| !t.is_empty())
            {
                token = Some(t.to_owned());
            }
        }
        let (all, end) = watch(&c, &id, fast()).await;
        let ends = all.events.iter().filter(|e| e.is_terminal()).count();
        assert!(
            ends >= 3,
            "{g:?}: three turns' ends were read, not one ({ends})"
        );
        assert_eq!(
            all.cursor, cursor,
            "{g:?}: the fresh watch read to the tail"
        );
        let WatchEndReason::Terminal(last) = end.reason else {
            panic!("{g:?}")
        };
        assert_eq!(
            Some(&last),
            all.events.iter().rev().find(|e| e.is_terminal()),
            "{g:?}: ended at the newest turn's end"
        );
        let said = Conversation::from_events(&all.events);
        assert!(
            said.messages().iter().any(|m| m.text == "Thank you."),
            "{g:?}"
        );
        s.stop().await;
    }
}

#[tokio::test]
async fn replies_carry_the_newest_token_in_generation_a_and_none_in_b() {
    let (s, c) = sandbox(MissionProtocol::EveA).await;
    let session = c
        .create_session(&MissionSpec::new("Does urban heat raise admissions?", 2500))
        .await
        .unwrap();
    let (seen, _) = watch(&c, &session.session_id, fast()).await;
    let newest = seen
        .events
        .iter()
        .rev()
        .find_map(|e| e.data["continuationToken"].as_str())
        .unwrap()
        .to_owned();
    assert_ne!(Some(&newest), session.continuation_token.as_ref());
    // The create's token is stale once a session.waiting replaced it.
    let stale = c
        .follow_up(
            &session.session_id,
            &FollowUp::Message("Go on".into()),
            session.continuation_token.as_deref(),
            dialect(MissionProtocol::EveA),
        )
        .await
        .unwrap_err();
    assert_eq!(stale.code(), ErrorCode::InvalidInput);
    c.follow_up(
        &session.session_id,
        &FollowUp::Message("Go on".into()),
        Some(&newest),
        dialect(MissionProtocol::EveA),
    )
    .await
    .unwrap();
    s.stop().await;

    let (s, c) = sandbox(MissionProtocol::EveB).await;
    let id = mission(&c, "Does urban heat raise admissions?", 40, 0).await;
    watch(&c, &id, fast()).await;
    let refused = c
        .follow_up(
            &id,
            &FollowUp::Message("Go on".into()),
            Some("eve:x"),
            dialect(MissionProtocol::EveB),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), ErrorCode::InvalidInput, "B refuses a token");
    // session_not_ready twice, then taken: retried, not shown.
    s.knobs().set(|k| k.not_ready = 2);
    let sent = c
        .follow_up(
            &id,
            &FollowUp::Message("Go on".into()),
            None,
            dialect(MissionProtocol::EveB),
        )
        .await
        .unwrap();
    assert!(sent.delivery_id.is_some_and(|d| !d.is_empty()));
    s.stop().await;
}

#[tokio::test]
async fn a_question_is_answered_by_option_and_by_text_and_the_turn_goes_on() {
    for g in GENERATIONS {
        for by_text in [false, true] {
            let (s, c) = sandbox(g).await;
            let id = mission(&c, "An ambiguous question about heat", 60, 0).await;
            let (asked, end) = watch(&c, &id, fast()).await;
            assert!(matches!(end.reason, WatchEndReason::Terminal(_)), "{g:?}");
            assert_eq!(status_of(&asked.events), MissionStatus::NeedsInput, "{g:?}");
            let pending = Conversation::from_events(&asked.events).pending();
            let q = &pending[0];
            assert!(!q.options.is_empty(), "{g:?}");
            let answer = if by_text {
                assert!(q.allow_freeform);
                InputResponse {
                    request_id: q.request_id.clone(),
                    option_id: None,
                    text: Some("Only the last five years".into()),
                }
            } else {
                InputResponse {
                    request_id: q.request_id.clone(),
                    option_id: Some(q.options[0].id.clone()),
                    text: None,
                }
            };
            let token = asked
                .events
                .iter()
                .rev()
                .find_map(|e| e.data["continuationToken"].as_str())
                .map(str::to_owned);
            c.follow_up(
                &id,
                &FollowUp::Answers(vec![answer]),
                token.as_deref(),
                dialect(g),
            )
            .await
            .unwrap();
            let opts = WatchOptions {
                start_index: Some(asked.cursor),
                ..fast()
            };
            let (after, _) = watch(&c, &id, opts).await;
            let mut all = asked.events.clone();
            all.extend(after.events.clone());
            assert!(
                Conversation::from_events(&all).pending().is_empty(),
                "{g:?}: the answer settled the question"
            );
            assert_eq!(
                status_of(&all),
                MissionStatus::Waiting,
                "{g:?} by text {by_text}"
            );
            // An option the request did not list is refused, never invented.
            let bad = c
                .follow_up(
                    &id,
                    &FollowUp::Answers(vec![InputResponse {
                        request_id: q.request_id.clone(),
                        option_id: Some("made-up".into()),
                        text: None,
                    }]),
                    None,
                    dialect(g),
                )
                .await;
            assert!(bad.is_err(), "{g:?}");
            s.stop().await;
        }
    }
}

#[tokio::test]
async fn cancel_is_accepted_while_a_turn_runs_and_nothing_to_cancel_after() {
    for g in [MissionProtocol::EveB, MissionProtocol::Eve27] {
        let (s, c) = sandbox(g).await;
        let id = mission(&c, "Does urban heat raise admissions?", 400, 20).await;
        // Watched on a task of its own; the events come back here as they arrive.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let c2 = c.clone();
        let id2 = id.clone();
        let watching = tokio::spawn(async move {
            let mut events = Vec::new();
            let end = c2
                .watch(&id2, fast(), |u| {
                    if let WatchUpdate::Event { event } = u {
                        let _ = tx.send(event.clone());
                        events.push(event);
                    }
                })
                .await
                .unwrap();
            (events, end)
        });
        let mut turn = None;
        let mut steps = 0;
        // Into the turn's work (a few steps), so there is something to cancel.
        while let Some(e) = rx.recv().await {
            if e.event == "turn.started" {
                turn = e.data["turnId"].as_str().map(str::to_owned);
            }
            if e.event.starts_with("step.") || e.event.starts_with("model.") {
                steps += 1;
            }
            if turn.is_some() && steps >= 2 {
                break;
            }
        }
        let ack = c.cancel(&id, turn.as_deref()).await.unwrap();
        assert!(ack.ok && !ack.nothing_to_cancel, "{g:?}: {ack:?}");
        let (events, end) = watching.await.unwrap();
        let n = names(&events);
        if g == MissionProtocol::Eve27 {
            let WatchEndReason::Terminal(e) = end.reason else {
                panic!()
            };
            assert_eq!(
                (e.event.as_str(), e.data["outcome"].as_str()),
                ("turn.settled", Some("cancelled"))
            );
        } else {
            let at = n
                .iter()
                .position(|x| *x == "turn.cancelled")
                .expect("turn.cancelled");
            assert_eq!(n[at + 1], "session.waiting", "{g:?}: {n:?}");
        }
        assert_eq!(status_of(&events), MissionStatus::Cancelled, "{g:?}");
        let again = c.cancel(&id, None).await.unwrap();
        assert!(again.ok, "{g:?}: {again:?}");
        s.stop().await;
    }
}

/// A restart in the middle of a mission: the history keeps the cursor with the events it
/// covers, and following again asks for exactly what was not stored.
#[test]
fn a_restart_resumes_from_the_stored_cursor() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("missions.sqlite");
    let (s, c) = rt.block_on(sandbox(MissionProtocol::EveA));
    let session = rt
        .block_on(c.create_session_with(
            &MissionSpec::new("Does urban heat raise admissions?", 2500),
            serde_json::Map::from_iter([
                ("events".to_owned(), 400.into()),
                ("paceMs".to_owned(), 10.into()),
            ]),
        ))
        .unwrap();
    let spec = MissionSpec::new("Does urban heat raise admissions?", 2500);
    // The first run, on a runtime of its own that is dropped mid-mission: its tasks stop
    // where they are, as in a crash.
    let first = tokio::runtime::Runtime::new().unwrap();
    let stored_before = first.block_on(async {
        let store = MissionStore::open(&db).unwrap();
        let record = store.insert(&session, &spec, s.base_url()).await.unwrap();
        let follower = Follower::new(store.clone(), Arc::new(Quiet));
        follower.resume(&record, Ok(client(&s)));
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let n = store
                .events(&session.session_id, 0, u32::MAX)
                .await
                .unwrap()
                .len();
            if n >= 100 {
                return n;
            }
        }
    });
    first.shutdown_background();
    rt.block_on(async {
        let store = MissionStore::open(&db).unwrap();
        let resume = store.resume_point(&session.session_id).await.unwrap();
        let cursor = resume.start_index.expect("a cursor was stored");
        assert!(cursor as usize >= stored_before.saturating_sub(50));
        let record = store.require(&session.session_id).await.unwrap();
        let follower = Follower::new(store.clone(), Arc::new(Quiet));
        follower.resume(&record, Ok(client(&s)));
        follower.finished(&session.session_id).await;
        let asked = s.stream_requests(&session.session_id);
        assert_eq!(
            asked.last().unwrap().start_index,
            Some(cursor as i64),
            "the restart asked for what was not stored: {asked:?}"
        );
        let stored: Vec<_> = store
            .events(&session.session_id, 0, u32::MAX)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.event.event, e.event.data))
            .collect();
        let clean = whole(&c, &session.session_id).await;
        assert_eq!(stored.len(), clean.len(), "nothing lost, nothing twice");
        assert_eq!(stored, clean);
        assert_eq!(
            store.require(&session.session_id).await.unwrap().status,
            MissionStatus::Waiting
        );
        s.stop().await;
    });
}

/// A mission that hands work to a sub-agent: in 27 its turn pauses on the call and
/// resumes by itself, so the watch follows it to the report; it never needs the person,
/// and the window says what runs while it waits. B names the sub-agent without pausing.
#[tokio::test(flavor = "multi_thread")]
async fn a_mission_that_delegates_is_followed_to_its_report() {
    for (protocol, pause) in [
        (MissionProtocol::EveB, false),
        (MissionProtocol::Eve27, false),
        (MissionProtocol::Eve27, true),
    ] {
        let (s, c) = sandbox(protocol).await;
        s.knobs().set(|k| k.delegate = true);
        s.knobs().set(|k| k.delegation_pause = pause);
        let id = mission(&c, "Does shade reduce heat stroke?", 60, 0).await;
        let (seen, end) = watch(&c, &id, fast()).await;
        let names = names(&seen.events);
        let report = Conversation::from_events(&seen.events);
        assert!(
            report.report().is_some_and(|r| r.text.contains("Findings")),
            "{protocol:?}: the watch stopped before the report: {names:?}"
        );
        assert_eq!(
            protocol::turn_end(end.terminal().unwrap()),
            Some(protocol::TurnEnd::Waiting),
            "{protocol:?}"
        );
        let status = seen
            .events
            .iter()
            .scan(MissionStatus::Running, |st, e| {
                *st = st.after(&protocol::read(e));
                Some(*st)
            })
            .collect::<Vec<_>>();
        assert!(
            !status.contains(&MissionStatus::NeedsInput),
            "{protocol:?}: {status:?}"
        );
        let agent = report
            .items
            .iter()
            .find(|i| i.step.as_ref().is_some_and(|st| st.kind == "agent"))
            .unwrap_or_else(|| panic!("{protocol:?}: no sub-agent step"));
        assert_eq!(agent.step.as_ref().unwrap().name, "researcher");
        // Spend counts what the sub-agent spent: B's newest cumulative usage, 27's
        // usage records summed (the delegated call's included); steps alone miss it.
        let cost = |e: &MissionEvent| e.data.pointer("/usage/costUsd").and_then(|c| c.as_f64());
        let steps: f64 = seen
            .events
            .iter()
            .filter(|e| e.event == "step.completed")
            .filter_map(cost)
            .sum();
        let spent = report.spent_usd().unwrap();
        let want = if protocol == MissionProtocol::Eve27 {
            seen.events
                .iter()
                .filter(|e| e.event == "usage.recorded")
                .filter_map(cost)
                .sum::<f64>()
        } else {
            let last = seen
                .events
                .iter()
                .rev()
                .find(|e| e.event == "session.waiting");
            last.and_then(cost).unwrap()
        };
        assert!(
            (spent - want).abs() < 1e-6,
            "{protocol:?}: {spent} != {want}"
        );
        let own: f64 = if protocol == MissionProtocol::Eve27 {
            seen.events
                .iter()
                .filter(|e| e.event == "usage.recorded" && e.data["owner"].get("runId").is_some())
                .filter_map(cost)
                .sum()
        } else {
            steps
        };
        assert!(spent > own + 0.001, "{protocol:?}: {spent} vs own {own}");
        if protocol == MissionProtocol::Eve27 && !pause {
            // eve 1.x: a task the call started, which ends with the call; no pause.
            assert!(!names.contains(&"turn.paused"), "{names:?}");
            let task = seen
                .events
                .iter()
                .find(|e| e.event == "task.started")
                .unwrap();
            let call = &agent.step.as_ref().unwrap().child.as_ref().unwrap().call_id;
            assert_eq!(task.data["startedBy"]["callId"], call.as_str());
            for item in &report.items {
                assert_ne!(
                    item.step.as_ref().map(|st| st.status),
                    Some(StepStatus::Running),
                    "a step stays open after the turn: {item:?}"
                );
            }
        }
        if protocol == MissionProtocol::Eve27 && pause {
            let paused = seen
                .events
                .iter()
                .position(|e| e.event == "turn.paused")
                .unwrap_or_else(|| panic!("no pause: {names:?}"));
            let at_pause = Conversation::from_events(&seen.events[..=paused]);
            assert_eq!(
                at_pause.activity().as_deref(),
                Some("Waiting for the sub-agent researcher")
            );
            assert!(names.contains(&"turn.resumed"), "{names:?}");
        }
    }
}

/// A history past eve's retention (`410 session_expired`) is said plainly at once, and
/// not asked for again.
#[tokio::test(flavor = "multi_thread")]
async fn an_expired_history_is_said_at_once_without_a_retry() {
    for protocol in GENERATIONS {
        let (s, c) = sandbox(protocol).await;
        let id = mission(&c, "Does shade reduce heat stroke?", 40, 0).await;
        let (seen, _) = watch(&c, &id, fast()).await;
        let asked = s.stream_requests(&id).len();
        s.knobs().set(|k| k.history_expired = true);
        let opts = WatchOptions {
            start_index: Some(seen.cursor),
            ..fast()
        };
        let err = c.watch(&id, opts, |_| {}).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::NotFound, "{protocol:?}");
        assert!(err.message().contains("expired"), "{}", err.message());
        assert_eq!(err.service_code(), Some("session_expired"));
        assert_eq!(
            s.stream_requests(&id).len(),
            asked + 1,
            "{protocol:?}: asked again"
        );
    }
}
