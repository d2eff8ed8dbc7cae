//! A long history, generated through the store's own append path: each mission's records
//! appended a batch at a time (`MissionStore::append_at`), its conversation continued and
//! kept as the follower keeps it (`Folded`), the search index brought up to date after.
//! The records are a real sandbox mission's, as Casebook's client read them off the wire.

use casebook_core::backend::SandboxOptions;
use casebook_core::missions::client::{FollowUp, InputResponse, MissionSpec, Session};
use casebook_core::missions::follower::Quiet;
use casebook_core::missions::protocol::MissionEvent;
use casebook_core::missions::store::conversations::Folded;
use casebook_core::missions::store::{MissionStatus, MissionStore};
use casebook_sandbox::MissionProtocol;
use std::sync::Arc;

/// Records appended in one go: the follower's largest batch.
const BATCH: usize = 1_000;

/// The records of one mission of at least `records` records, streamed by the embedded
/// sandbox (eve generation B, no pause) to Casebook and read back from its store.
pub async fn recorded_mission(objective: &str, records: u64) -> Vec<MissionEvent> {
    // The sandbox's length is in search rounds of its own measure, 0.7 to 0.85 records
    // each: asked again, longer, when it came out short.
    let mut rounds = records * 13 / 10;
    for _ in 0..4 {
        let events = mission_of_rounds(objective, rounds).await;
        let got = events.len() as u64;
        if got >= records {
            return events;
        }
        rounds = rounds * records / got.max(1) + records / 50;
    }
    panic!("the sandbox made no mission of {records} records (it plays at most 100,000 rounds)");
}

async fn mission_of_rounds(objective: &str, rounds: u64) -> Vec<MissionEvent> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let options = SandboxOptions {
        mission_protocol: Some(MissionProtocol::EveB),
        mission_pace_ms: Some(0),
        mission_events: Some(rounds),
        ..SandboxOptions::default()
    };
    let core = crate::store::casebook_in(dir.path(), options, Arc::new(Quiet)).await;
    let spec = MissionSpec::new(objective, 2500);
    let id = core.start_mission(&spec).await.expect("the mission starts");
    let id = id.session_id;
    // A long mission stops at its budget's prompt: "Continue", until its turn is over.
    for _ in 0..100 {
        core.watch_finished(&id).await;
        let record = core.mission(&id).await.expect("the mission");
        if record.status != MissionStatus::NeedsInput {
            break;
        }
        let (conversation, _) = core.store.conversation(&id).await.expect("read");
        let answers = (conversation.pending().into_iter())
            .map(|p| {
                let option = (p.options.iter().find(|o| o.id == "continue"))
                    .or(p.options.first())
                    .map(|o| o.id.clone());
                InputResponse {
                    request_id: p.request_id,
                    option_id: option,
                    text: None,
                }
            })
            .collect();
        (core.follow_up_mission(&id, &FollowUp::Answers(answers)))
            .await
            .expect("the answer is sent");
    }
    let events = core
        .store
        .events(&id, 0, u32::MAX)
        .await
        .expect("its records");
    events.into_iter().map(|e| e.event).collect()
}

/// Adds a finished mission `session_id` of `objective` to `store`, its records `events`.
pub async fn add_mission(
    store: &MissionStore,
    session_id: &str,
    objective: &str,
    events: &[MissionEvent],
) {
    let session = Session {
        session_id: session_id.to_owned(),
        continuation_token: None,
        extra: Default::default(),
    };
    let spec = MissionSpec::new(objective, 2500);
    (store.insert(&session, &spec, "http://127.0.0.1:9"))
        .await
        .expect("the mission is recorded");
    let (mut conversation, _) = store.conversation(session_id).await.expect("read");
    conversation.set_budget(spec.budget_cents);
    for batch in events.chunks(BATCH) {
        let appended = (store.append_at(session_id, batch.to_vec(), None))
            .await
            .expect("the records are appended");
        let folded = Folded::of(&mut conversation, &appended);
        (store.save_conversation(session_id, folded))
            .await
            .expect("the conversation is kept");
    }
    // Over: opening it asks no service.
    (store.set_status(session_id, MissionStatus::Complete))
        .await
        .expect("its status");
    store.index_text().await.expect("the search index");
}
