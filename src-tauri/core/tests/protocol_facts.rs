//! Each vocabulary's reader on recorded streams of its generation (`tests/data/eve`): the
//! facts every record says, in order, and where a turn ends for a watcher.

mod common;

use casebook_core::missions::protocol::facts::{Awaited, DeltaText, Fact, PartKind, TurnOutcome};
use casebook_core::missions::protocol::ndjson::Generation;
use casebook_core::missions::protocol::{self, MissionEvent, TurnEnd};
use common::recorded as events;

/// A fact's kind, as its variant's name.
fn kind(f: &Fact) -> String {
    let debug = format!("{f:?}");
    debug
        .split([' ', '(', '{'])
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Every record's facts, one line each: `event: Fact, Fact`.
fn said(events: &[MissionEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            let facts: Vec<String> = protocol::read(e).iter().map(kind).collect();
            format!("{}: {}", e.event, facts.join(", "))
        })
        .collect()
}

#[test]
fn generation_a_says_its_turns_messages_question_and_waits_with_their_tokens() {
    let es = events("gen-a.ndjson", Generation::Events(Some(19)));
    assert_eq!(
        said(&es),
        [
            "session.started: ",
            "turn.started: TurnStarted",
            "message.received: UserMessage",
            "step.started: ",
            "message.appended: Delta",
            "message.appended: Delta",
            "message.completed: PartCompleted",
            "input.requested: RequestOpened",
            "step.completed: Spent",
            "session.waiting: Waiting",
            "turn.started: TurnStarted",
            "input.resolved: RequestSettled",
            "message.appended: Delta",
            "message.appended: Delta",
            "message.completed: PartCompleted",
            "turn.completed: TurnEnded",
            "session.waiting: Waiting",
        ]
    );
    let tokens: Vec<_> = es
        .iter()
        .flat_map(protocol::read)
        .filter_map(|f| match f {
            Fact::Waiting { continuation_token } => Some(continuation_token),
            _ => None,
        })
        .collect();
    assert_eq!(tokens.len(), 2);
    assert!(
        tokens
            .iter()
            .all(|t| t.as_deref().is_some_and(|t| !t.is_empty())),
        "{tokens:?}"
    );
    let deltas: Vec<_> = es
        .iter()
        .flat_map(protocol::read)
        .filter_map(|f| match f {
            Fact::Delta {
                kind: Some(PartKind::Text),
                text: DeltaText::Append(t),
                ..
            } => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(deltas.len(), 4, "{deltas:?}");
}

#[test]
fn generation_b_holds_for_input_not_for_tasks_signs_in_and_fails() {
    let es = events("gen-b.ndjson", Generation::Events(Some(26)));
    let facts: Vec<Fact> = es.iter().flat_map(protocol::read).collect();
    let held: Vec<Option<bool>> = facts
        .iter()
        .filter_map(|f| match f {
            Fact::TurnHeld { for_person, .. } => Some(*for_person),
            _ => None,
        })
        .collect();
    assert_eq!(held, [Some(true), Some(false)]);
    assert!(facts.iter().any(|f| matches!(
        f,
        Fact::SignInOpened {
            interaction: None,
            ..
        }
    )));
    assert!(
        facts
            .iter()
            .any(|f| matches!(f, Fact::SignInSettled { .. }))
    );
    assert!(matches!(
        facts.last(),
        Some(Fact::SessionEnded { failed: true, .. })
    ));
    let settled: Vec<&str> = facts
        .iter()
        .filter_map(|f| match f {
            Fact::CallSettled { status, .. } => Some(status.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(settled.len(), 2);
    assert!(facts.iter().any(|f| matches!(f, Fact::TaskStarted { .. })));
    assert!(facts.iter().any(|f| matches!(f, Fact::TaskSettled { .. })));
}

#[test]
fn generation_27_assembles_parts_asks_through_an_interaction_and_settles_its_turn() {
    let es = events("conversation-27.ndjson", Generation::Lines);
    let facts: Vec<Fact> = es.iter().flat_map(protocol::read).collect();
    let kinds: Vec<String> = facts.iter().map(kind).collect();
    for want in [
        "UserMessage",
        "TurnStarted",
        "Delta",
        "PartCompleted",
        "CallRequested",
        "CallInput",
        "CallSettled",
        "Spent",
        "ChildStarted",
        "RequestOpened",
        "TurnHeld",
        "RequestSettled",
        "TurnResumed",
        "TurnEnded",
    ] {
        assert!(kinds.iter().any(|k| k == want), "no {want} in {kinds:?}");
    }
    assert!(matches!(
        facts.last(),
        Some(Fact::TurnEnded {
            session_waits: true,
            ..
        })
    ));
    // A v26-typed event riding inside a v27 commit reads as in 26.
    let es = events("gen-27.ndjson", Generation::Lines);
    assert!(said(&es).contains(&"message.completed: PartCompleted".to_owned()));
}

#[test]
fn records_that_carry_no_fact_say_nothing_and_unknown_names_are_kept_silent() {
    let ev = |name: &str, data: &str| MissionEvent::new(None, name.into(), data);
    for (name, data) in [
        ("session.started", "{}"),
        ("delivery.admitted", "{}"),
        ("weather.report", r#"{"sky":"grey"}"#),
        ("call.progress", r#"{"callId":"c1"}"#),
        // A part of another kind (a file) is not a message.
        ("content.delta", r#"{"partId":"p1","kind":"file"}"#),
        // No cost is no spend.
        ("usage.recorded", r#"{"usage":{"costUsd":0}}"#),
    ] {
        assert_eq!(protocol::read(&ev(name, data)), [], "{name}");
    }
}

#[test]
fn turns_end_at_waiting_input_and_the_session_end_but_not_at_background_work() {
    let end =
        |name: &str, data: &str| protocol::turn_end(&MissionEvent::new(None, name.into(), data));
    assert_eq!(end("session.waiting", "{}"), Some(TurnEnd::Waiting));
    assert_eq!(
        end("turn.waiting", r#"{"on":"input"}"#),
        Some(TurnEnd::NeedsInput)
    );
    assert_eq!(end("turn.waiting", r#"{"on":"tasks"}"#), None);
    assert_eq!(
        end("session.failed", r#"{"message":"x"}"#),
        Some(TurnEnd::Failed)
    );
    assert_eq!(
        end("turn.paused", r#"{"awaiting":[]}"#),
        Some(TurnEnd::NeedsInput)
    );
    assert_eq!(
        end("turn.settled", r#"{"outcome":"failed"}"#),
        Some(TurnEnd::Waiting)
    );
    assert_eq!(
        end("session.ended", r#"{"outcome":"completed"}"#),
        Some(TurnEnd::Complete)
    );
    assert_eq!(end("session.completed", "{}"), Some(TurnEnd::Complete));
    assert_eq!(end("turn.completed", "{}"), None);
    assert_eq!(end("message.appended", "{}"), None);
}

#[test]
fn a_v27_pause_is_the_person_s_only_when_it_awaits_an_interaction() {
    let held =
        |data: &str| match protocol::read(&MissionEvent::new(None, "turn.paused".into(), data))
            .as_slice()
        {
            [
                Fact::TurnHeld {
                    for_person,
                    awaiting,
                },
            ] => (*for_person, awaiting.clone()),
            other => panic!("{other:?}"),
        };
    let (person, awaiting) = held(r#"{"turnId":"t1","awaiting":[{"callId":"call_1"}]}"#);
    assert_eq!(person, Some(false));
    assert_eq!(awaiting, [Awaited::Call("call_1".into())]);
    assert_eq!(held(r#"{"awaiting":[{"taskId":"task_1"}]}"#).0, Some(false));
    assert_eq!(
        held(r#"{"awaiting":[{"callId":"c"},{"interactionId":"i"}]}"#).0,
        Some(true)
    );
    // A pause that names nothing is the person's, as before eve listed what it awaits.
    assert_eq!(held("{}").0, Some(true));
    assert_eq!(
        protocol::turn_end(&MissionEvent::new(
            None,
            "turn.paused".into(),
            r#"{"awaiting":[{"callId":"call_1"}]}"#
        )),
        None
    );
}

#[test]
fn a_failed_turn_says_eve_s_message_and_hint_and_leaves_the_session_waiting() {
    let ev = |name: &str, data: &str| MissionEvent::new(None, name.into(), data);
    let settled = protocol::read(&ev(
        "turn.settled",
        r#"{"turnId":"t1","outcome":"failed","error":{"code":"model_unavailable","message":"The model did not answer.","hint":"Try again in a minute."}}"#,
    ));
    assert!(
        matches!(
            settled.as_slice(),
            [Fact::TurnEnded { outcome, error: Some(e), session_waits: true, held: false }]
                if *outcome == TurnOutcome::Failed && e == "The model did not answer. (Try again in a minute.)"
        ),
        "{settled:?}"
    );
    // B: the failed turn, then the session waits: usable, not failed.
    let b: Vec<Fact> = [
        ev("turn.failed", r#"{"error":{"message":"Tool crashed."}}"#),
        ev("session.waiting", "{}"),
    ]
    .iter()
    .flat_map(protocol::read)
    .collect();
    use casebook_core::missions::store::MissionStatus;
    assert_eq!(MissionStatus::Running.after(&b), MissionStatus::Waiting);
}
