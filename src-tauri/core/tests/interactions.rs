//! Approvals and sign-ins on recorded streams of each generation (`tests/data/eve`): what the
//! conversation shows as each settles, and where a watcher stops (never at a hold that is
//! only a sign-in's: the turn goes on when the browser's callback arrives).

mod common;

use casebook_core::missions::conversation::{Conversation, ItemKind, StepStatus};
use casebook_core::missions::protocol::ndjson::Generation;
use casebook_core::missions::protocol::{self, MissionEvent, TurnEnd, TurnTracker};
use common::recorded as events;

/// Where a watcher reading these records from the start stops: the event's name, and how.
fn stops(es: &[MissionEvent]) -> Vec<(String, TurnEnd)> {
    let mut t = TurnTracker::default();
    es.iter()
        .filter_map(|e| {
            t.observe_all(&protocol::read(e))
                .map(|end| (e.event.clone(), end))
        })
        .collect()
}

#[test]
fn v27_approvals_show_their_styled_options_and_each_outcome_as_it_settles() {
    let es = events("interactions-27.ndjson", Generation::Lines);
    // The conversation after the first approval is asked: its buttons, as the server
    // gave them.
    let asked = es.iter().position(|e| e.event == "turn.paused").unwrap();
    let c = Conversation::from_events(&es[..=asked]);
    let pending = c.pending();
    assert_eq!(pending.len(), 1);
    let r = &pending[0];
    assert_eq!(r.request_id, "i1");
    assert_eq!(r.kind, "approval");
    assert_eq!(r.title.as_deref(), Some("Run web_search?"));
    assert_eq!(r.prompt, "The agent wants to search the web for heat.");
    let options: Vec<(&str, &str, Option<&str>)> = r
        .options
        .iter()
        .map(|o| (o.id.as_str(), o.label.as_str(), o.style.as_deref()))
        .collect();
    assert_eq!(
        options,
        [
            ("approve", "Approve", Some("primary")),
            ("cancel", "Cancel", Some("danger"))
        ]
    );
    assert_eq!(
        r.options[1].description.as_deref(),
        Some("Skip this search.")
    );

    let c = Conversation::from_events(&es);
    assert!(c.pending().is_empty());
    type Settled = (String, Option<String>, Option<String>, Option<String>);
    let settled: Vec<Settled> = c
        .items
        .iter()
        .filter_map(|i| i.request.clone())
        .map(|r| (r.request_id, r.outcome, r.reason, r.answer))
        .collect();
    assert_eq!(
        settled,
        [
            (
                "i1".into(),
                Some("accepted".into()),
                None,
                Some("Approve".into())
            ),
            (
                "i2".into(),
                Some("declined".into()),
                None,
                Some("Cancel".into())
            ),
            (
                "i3".into(),
                Some("withdrawn".into()),
                Some("superseded-by-message".into()),
                None
            ),
        ]
    );
    let steps: Vec<(String, StepStatus)> = c
        .items
        .iter()
        .filter_map(|i| i.step.clone())
        .map(|s| (s.name, s.status))
        .collect();
    assert_eq!(
        steps,
        [
            ("web_search".into(), StepStatus::Completed),
            ("read_source".into(), StepStatus::Rejected),
            ("read_source".into(), StepStatus::Cancelled),
        ]
    );
    // The message that withdrew the third approval is the person's.
    assert!(
        c.items
            .iter()
            .any(|i| i.kind == ItemKind::User && i.text == "Skip that one, write it up")
    );
    // A watcher stops at each approval (the person acts) and at the turn's end.
    let ends: Vec<TurnEnd> = stops(&es).into_iter().map(|(_, e)| e).collect();
    assert_eq!(
        ends,
        [
            TurnEnd::NeedsInput,
            TurnEnd::NeedsInput,
            TurnEnd::NeedsInput,
            TurnEnd::Waiting
        ]
    );
}

#[test]
fn v27_sign_in_attempts_share_one_card_the_superseded_one_closes_quietly_and_the_watch_goes_on() {
    let es = events("signin-27.ndjson", Generation::Lines);
    let first = es.iter().position(|e| e.event == "turn.paused").unwrap();
    let c = Conversation::from_events(&es[..=first]);
    let cards: Vec<_> = c
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::SignIn)
        .collect();
    assert_eq!(cards.len(), 1);
    let s = cards[0].sign_in.as_ref().unwrap();
    assert_eq!(s.name, "Notion");
    assert_eq!(s.url.as_deref(), Some("https://example.org/device/1"));
    assert_eq!(s.user_code.as_deref(), Some("ABCD-1234"));
    assert_eq!(s.expires_at.as_deref(), Some("2026-11-25T10:15:00Z"));
    assert_eq!(
        s.instructions.as_deref(),
        Some("Enter the code, then approve read access.")
    );
    assert_eq!(s.attempt.as_deref(), Some("i1"));
    // Never an answer to POST: a sign-in is not a pending request.
    assert!(c.pending().is_empty());
    assert_eq!(c.summary().sign_ins.len(), 1);
    assert_eq!(
        c.activity().as_deref(),
        Some("Waiting for you to sign in to Notion")
    );

    // The second attempt replaced the first in the same card.
    let second = es.iter().rposition(|e| e.event == "turn.paused").unwrap();
    let c = Conversation::from_events(&es[..=second]);
    let cards: Vec<_> = c
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::SignIn)
        .collect();
    assert_eq!(cards.len(), 1, "one card per service");
    let s = cards[0].sign_in.as_ref().unwrap();
    assert!(cards[0].open);
    assert_eq!(s.attempt.as_deref(), Some("i2"));
    assert_eq!(s.user_code.as_deref(), Some("WXYZ-9876"));
    assert_eq!(
        s.outcome, None,
        "the superseded attempt is not shown as failed"
    );

    let c = Conversation::from_events(&es);
    let card = c.items.iter().find(|i| i.kind == ItemKind::SignIn).unwrap();
    assert!(!card.open);
    assert_eq!(
        card.sign_in.as_ref().unwrap().outcome.as_deref(),
        Some("accepted")
    );
    assert!(c.summary().sign_ins.is_empty());
    assert!(!c.items.iter().any(|i| i.kind == ItemKind::Failure));
    // The call the sign-in interrupted is one step, cancelled while it waited.
    let steps: Vec<_> = c.items.iter().filter_map(|i| i.step.as_ref()).collect();
    assert_eq!(steps[0].name, "notion_search");
    assert_eq!(steps[0].status, StepStatus::Cancelled);
    // The watcher follows through both pauses to the turn's end.
    assert_eq!(stops(&es), [("turn.settled".to_owned(), TurnEnd::Waiting)]);
}

#[test]
fn b_sign_in_attempts_are_tracked_by_attempt_id_and_the_held_turn_goes_on_to_its_end() {
    let es = events("signin-b.ndjson", Generation::Events(Some(26)));
    let c = Conversation::from_events(&es[..5]);
    let card = c.items.iter().find(|i| i.kind == ItemKind::SignIn).unwrap();
    let s = card.sign_in.as_ref().unwrap();
    assert_eq!(s.name, "notion");
    assert_eq!(s.attempt.as_deref(), Some("att_1"));
    assert_eq!(s.instructions.as_deref(), Some("Enter the code."));
    assert!(c.pending().is_empty());

    // The newer attempt arrives before the older one's "failed": one open card, att_2.
    let c = Conversation::from_events(&es[..8]);
    let cards: Vec<_> = c
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::SignIn)
        .collect();
    assert_eq!(cards.len(), 1);
    assert!(cards[0].open);
    let s = cards[0].sign_in.as_ref().unwrap();
    assert_eq!(s.attempt.as_deref(), Some("att_2"));
    assert_eq!(s.url.as_deref(), Some("https://example.org/device/2"));
    assert_eq!(s.outcome, None);

    let c = Conversation::from_events(&es);
    let card = c.items.iter().find(|i| i.kind == ItemKind::SignIn).unwrap();
    assert_eq!(
        card.sign_in.as_ref().unwrap().outcome.as_deref(),
        Some("authorized")
    );
    assert_eq!(
        c.report().map(|r| r.text.as_str()),
        Some("Your notes say heat matters.")
    );
    // Neither `turn.waiting {on: "input"}` after a sign-in ends the watch.
    assert_eq!(
        stops(&es),
        [("session.waiting".to_owned(), TurnEnd::Waiting)]
    );
}

#[test]
fn an_older_attempt_closed_first_leaves_the_card_for_the_newer_one_and_a_question_still_stops() {
    let b = |name: &str, data: &str| MissionEvent::new(None, name.into(), data);
    let mut es = vec![
        b("turn.started", r#"{"turnId":"t1"}"#),
        b(
            "authorization.required",
            r#"{"name":"drive","attemptId":"a1","authorization":{"url":"https://example.org/1","userCode":"A"}}"#,
        ),
        // Before 0.70 nothing follows a sign-in: not a finished conversation.
        b(
            "authorization.completed",
            r#"{"name":"drive","attemptId":"a1","outcome":"failed","reason":"Superseded by a newer authorization attempt."}"#,
        ),
    ];
    let c = Conversation::from_events(&es);
    let card = c.items.iter().find(|i| i.kind == ItemKind::SignIn).unwrap();
    assert!(!card.open);
    assert_eq!(
        card.sign_in.as_ref().unwrap().outcome.as_deref(),
        Some("superseded")
    );
    es.push(b(
        "authorization.required",
        r#"{"name":"drive","attemptId":"a2","authorization":{"url":"https://example.org/2","userCode":"B"}}"#,
    ));
    let c = Conversation::from_events(&es);
    let cards: Vec<_> = c
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::SignIn)
        .collect();
    assert_eq!(cards.len(), 1);
    assert!(cards[0].open);
    assert_eq!(
        cards[0].sign_in.as_ref().unwrap().user_code.as_deref(),
        Some("B")
    );
    assert!(stops(&es).is_empty());
    // A real failure is shown as one.
    es.push(b(
        "authorization.completed",
        r#"{"name":"drive","attemptId":"a2","outcome":"declined"}"#,
    ));
    let c = Conversation::from_events(&es);
    let card = c.items.iter().find(|i| i.kind == ItemKind::SignIn).unwrap();
    assert_eq!(
        card.sign_in.as_ref().unwrap().outcome.as_deref(),
        Some("declined")
    );

    // A question open beside a sign-in: the hold is the person's answer, and stops.
    let es = vec![
        b("turn.started", r#"{"turnId":"t1"}"#),
        b(
            "authorization.required",
            r#"{"name":"drive","attemptId":"a1","authorization":{"url":"https://example.org/1"}}"#,
        ),
        b(
            "input.requested",
            r#"{"requests":[{"requestId":"q1","kind":"question","prompt":"Which years?"}]}"#,
        ),
        b("turn.waiting", r#"{"on":"input"}"#),
    ];
    assert_eq!(
        stops(&es),
        [("turn.waiting".to_owned(), TurnEnd::NeedsInput)]
    );
}

#[test]
fn a_call_interrupted_for_a_sign_in_that_runs_again_stays_one_step() {
    let e = |name: &str, data: &str| MissionEvent::new(None, name.into(), data);
    let es = [
        e(
            "call.requested",
            r#"{"callId":"c1","capability":{"kind":"tool","name":"notes_search"},"input":{"query":"heat"}}"#,
        ),
        e(
            "call.settled",
            r#"{"callId":"c1","outcome":"interrupted","reason":"authorization-required"}"#,
        ),
        e(
            "call.settled",
            r#"{"callId":"c1","outcome":"completed","output":{"text":"3 notes"}}"#,
        ),
    ];
    let c = Conversation::from_events(&es[..2]);
    let steps: Vec<_> = c.items.iter().filter_map(|i| i.step.clone()).collect();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].status, StepStatus::Cancelled);
    let c = Conversation::from_events(&es);
    let steps: Vec<_> = c.items.iter().filter_map(|i| i.step.clone()).collect();
    assert_eq!(steps.len(), 1, "the rerun settles the same step");
    assert_eq!(steps[0].status, StepStatus::Completed);
    assert_eq!(steps[0].output.as_deref(), Some("3 notes"));
}
