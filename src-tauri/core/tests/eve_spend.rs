//! Spend against the budget as a window hears it: eve's cumulative spend arrives on a
//! waiting record that changes no item of the conversation, and the subscriber must
//! still be told, or the window's budget warning never shows.

mod common;

use casebook_core::missions::follower::{Feed, Follower, MissionUpdate, Quiet};
use casebook_core::missions::spend::{BudgetLevel, BudgetUse};
use casebook_sandbox::{MissionProtocol, Pace, SandboxConfig};
use std::sync::{Arc, Mutex};

/// The spend a subscriber heard last, and the verdict that came with it.
type Heard = (f64, Option<BudgetUse>);

#[tokio::test(flavor = "multi_thread")]
async fn the_newest_spend_reaches_a_subscriber_even_on_a_record_that_changes_no_item() {
    for (protocol, percent, level) in [
        (MissionProtocol::EveB, 85, BudgetLevel::Warning),
        (MissionProtocol::EveA, 120, BudgetLevel::Exceeded),
        (MissionProtocol::Eve27, 85, BudgetLevel::Warning),
    ] {
        // Paced slower than the follower gathers a batch: each record arrives alone.
        let service = casebook_sandbox::start(SandboxConfig {
            pace: Pace::Instant,
            mission_pace_ms: Some(45),
            mission_events: Some(40),
            mission_protocol: protocol,
            ..Default::default()
        })
        .await
        .unwrap();
        service.knobs().set(|k| k.spend_percent = Some(percent));
        let (client, session, store, record) = common::created_and_kept(&service).await;
        let follower = Follower::new(store.clone(), Arc::new(Quiet));
        let heard: Arc<Mutex<Option<Heard>>> = Arc::default();
        let into = heard.clone();
        let sink = Box::new(move |u: MissionUpdate| {
            if let MissionUpdate::Items { changes } = u
                && let Some(spent) = changes.facts.spent_usd
            {
                *into.lock().unwrap() = Some((spent, changes.facts.budget));
            }
            true
        });
        follower.resume_created(&record, Ok(client));
        follower
            .subscribe(&record, None, "test", sink, Feed::RECORDS)
            .await
            .unwrap();
        follower.finished(&session.session_id).await;
        let (spent, verdict) = heard.lock().unwrap().clone().expect("no spend heard");
        let want = 5.0 * percent as f64 / 100.0;
        assert!(
            (spent - want).abs() < 0.005,
            "{protocol:?}: heard {spent}, the service said {want}"
        );
        let stored = store.conversation(&session.session_id).await.unwrap().0;
        assert_eq!(
            stored.spent_usd().map(|s| (s * 100.0).round()),
            Some(want * 100.0)
        );
        // Core's verdict goes with the spend, live and as kept: the window shows it as is.
        let verdict = verdict.expect("the verdict goes with the spend");
        assert_eq!(verdict, BudgetUse::of(Some(spent), 500).unwrap());
        assert_eq!(verdict.level, level, "{protocol:?}");
        let kept = store
            .conversation_tail(&session.session_id, 10)
            .await
            .unwrap()
            .facts
            .budget;
        assert_eq!(kept.map(|b| b.level), Some(level), "{protocol:?}: as kept");
    }
}
