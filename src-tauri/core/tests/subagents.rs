//! A delegated sub-agent opened from its parent's step: its stream read only then,
//! through the parent's route or its own stream path (the sandbox's `childRoute` knob,
//! asserted from the sandbox's own log), its conversation the same model as the
//! parent's, and what was read kept so it opens again with the service gone.

mod common;

use casebook_core::ErrorCode;
use casebook_core::missions::client::MissionSpec;
use casebook_core::missions::conversation::{ChildRef, ItemKind};
use casebook_core::missions::follower::{Follower, Quiet};
use casebook_core::missions::store::{MissionStatus, MissionStore};
use casebook_core::missions::stream::child::ChildLimits;
use casebook_core::missions::subagents;
use casebook_sandbox::{
    ChildRoute, ChildStreamRequest, MissionProtocol, Pace, RunningSandbox, SandboxConfig, start,
};
use common::investigation_client as client;
use std::sync::Arc;
use std::time::Duration;

async fn sandbox(protocol: MissionProtocol, route: ChildRoute) -> RunningSandbox {
    let s = start(SandboxConfig {
        pace: Pace::Instant,
        mission_protocol: protocol,
        mission_events: Some(40),
        ..Default::default()
    })
    .await
    .unwrap();
    s.knobs().set(|k| k.delegate = true);
    s.knobs().set(|k| k.child_route = route);
    s
}

/// A delegating mission followed to its report and kept in `store`; its session id and
/// the sub-agent its step names.
async fn delegated(s: &RunningSandbox, store: &MissionStore) -> (String, ChildRef) {
    let c = client(s);
    let spec = MissionSpec::new("Does shade reduce heat stroke among older adults?", 2500);
    let session = c.create_session(&spec).await.unwrap();
    let record = store.insert(&session, &spec, s.base_url()).await.unwrap();
    let follower = Follower::new(store.clone(), Arc::new(Quiet));
    follower.resume_created(&record, Ok(c));
    tokio::time::timeout(
        Duration::from_secs(60),
        follower.finished(&session.session_id),
    )
    .await
    .expect("the mission reaches its report");
    let id = session.session_id;
    assert_eq!(
        store.require(&id).await.unwrap().status,
        MissionStatus::Waiting
    );
    let (conv, _) = store.conversation(&id).await.unwrap();
    let item = conv
        .items
        .iter()
        .find(|i| i.step.as_ref().is_some_and(|st| st.child.is_some()))
        .expect("a step that opens its sub-agent");
    assert_eq!(item.text, "Sub-agent researcher");
    let step = item.step.as_ref().unwrap();
    assert_eq!(step.kind, "agent");
    assert_eq!(step.name, "researcher");
    (id, step.child.clone().unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sub_agent_opens_to_its_own_conversation_by_either_route_read_only_then() {
    let cases = [
        (MissionProtocol::EveB, ChildRoute::Both),
        (MissionProtocol::EveB, ChildRoute::Own),
        (MissionProtocol::Eve27, ChildRoute::Parent),
        (MissionProtocol::Eve27, ChildRoute::Own),
        (MissionProtocol::EveA, ChildRoute::Both),
    ];
    for (protocol, route) in cases {
        let what = format!("{protocol:?} {route:?}");
        let s = sandbox(protocol, route).await;
        let store = MissionStore::in_memory().unwrap();
        let (id, child) = delegated(&s, &store).await;
        // Following the parent never reads the child.
        assert!(
            s.child_stream_requests(&child.session_id).is_empty(),
            "{what}"
        );

        let sub = subagents::open(
            &store,
            Ok(client(&s)),
            &id,
            &child.call_id,
            ChildLimits::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert_eq!(sub.name, "researcher");
        assert_eq!(sub.session_id, child.session_id);
        assert_eq!(sub.status, MissionStatus::Complete, "{what}: it ended");
        assert!(sub.stale.is_none() && !sub.more, "{what}");
        let task = &sub.messages[0];
        assert!(
            task.text.starts_with("Check every finding on"),
            "{what}: {task:?}"
        );
        let reply = sub.messages.iter().rfind(|m| !m.narration).unwrap();
        assert!(reply.text.starts_with("# Findings on"), "{what}: {reply:?}");
        let search = sub
            .items
            .iter()
            .filter(|i| i.kind == ItemKind::Tool)
            .filter_map(|i| i.step.as_ref())
            .find(|st| st.name == "web_search")
            .unwrap_or_else(|| panic!("{what}: no search step"));
        assert!(!search.sources.is_empty(), "{what}");
        assert!(
            sub.sources
                .iter()
                .any(|src| src.url == search.sources[0].url)
        );
        assert_eq!(sub.facts.sources as usize, sub.sources.len());

        // The route the knob leaves: the parent's first, the record's own path after a 404.
        let asked = s.child_stream_requests(&child.session_id);
        let expected = match route {
            ChildRoute::Both | ChildRoute::Parent => vec![ChildStreamRequest {
                via_parent: true,
                served: true,
            }],
            ChildRoute::Own => vec![
                ChildStreamRequest {
                    via_parent: true,
                    served: false,
                },
                ChildStreamRequest {
                    via_parent: false,
                    served: true,
                },
            ],
        };
        assert_eq!(asked, expected, "{what}");

        // Finished: opening again reads nothing more, and shows the same.
        let again = subagents::open(
            &store,
            Ok(client(&s)),
            &id,
            &child.session_id,
            ChildLimits::default(),
        )
        .await
        .unwrap();
        assert_eq!(again.items, sub.items, "{what}");
        assert_eq!(
            s.child_stream_requests(&child.session_id).len(),
            asked.len()
        );
        s.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn what_was_read_opens_again_offline_and_never_opened_says_why() {
    let s = sandbox(MissionProtocol::Eve27, ChildRoute::Both).await;
    let store = MissionStore::in_memory().unwrap();
    let (id, child) = delegated(&s, &store).await;
    // Part of it: the rest is left for a later opening.
    let part = ChildLimits {
        records: 8,
        ..ChildLimits::default()
    };
    let first = subagents::open(&store, Ok(client(&s)), &id, &child.call_id, part)
        .await
        .unwrap();
    assert!(first.more && first.stale.is_none());
    let unknown = subagents::open(
        &store,
        Ok(client(&s)),
        &id,
        "call_nope",
        ChildLimits::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(unknown.code(), ErrorCode::NotFound);
    assert!(
        unknown.message().contains(&child.call_id),
        "{}",
        unknown.message()
    );
    let gone = client(&s);
    s.stop().await;

    // The service is gone: what was kept shows, as it was, saying why.
    let kept = subagents::open(
        &store,
        Ok(gone),
        &id,
        &child.call_id,
        ChildLimits::default(),
    )
    .await
    .unwrap();
    assert_eq!(kept.items, first.items);
    assert_eq!(kept.sources, first.sources);
    assert!(kept.stale.is_some());
    assert_eq!(kept.facts.records, 8);

    // Never opened and no service: the failure is the answer.
    let fresh = MissionStore::in_memory().unwrap();
    let s = sandbox(MissionProtocol::EveB, ChildRoute::Both).await;
    let (id, child) = delegated(&s, &fresh).await;
    let gone = client(&s);
    s.stop().await;
    let e = subagents::open(
        &fresh,
        Ok(gone),
        &id,
        &child.call_id,
        ChildLimits::default(),
    )
    .await
    .unwrap_err();
    assert!(e.is_network(), "{e:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_sub_agent_shows_what_it_has_and_reads_on_when_opened_again() {
    // A slow pace: the child is opened while it still works.
    let s = start(SandboxConfig {
        pace: Pace::Instant,
        mission_protocol: MissionProtocol::EveB,
        mission_events: Some(40),
        mission_pace_ms: Some(60),
        ..Default::default()
    })
    .await
    .unwrap();
    s.knobs().set(|k| k.delegate = true);
    let store = MissionStore::in_memory().unwrap();
    let (id, child) = delegated(&s, &store).await;
    let limits = ChildLimits {
        records: 5,
        ..ChildLimits::default()
    };
    let first = subagents::open(&store, Ok(client(&s)), &id, &child.call_id, limits)
        .await
        .unwrap();
    assert!(first.more, "stopped at the bound");
    assert_eq!(first.facts.records, 5);
    let mut last = first.facts.records;
    let mut opened = 1;
    loop {
        let sub = subagents::open(
            &store,
            Ok(client(&s)),
            &id,
            &child.call_id,
            ChildLimits::default(),
        )
        .await
        .unwrap();
        opened += 1;
        assert!(sub.facts.records >= last, "records only grow");
        last = sub.facts.records;
        if sub.status == MissionStatus::Complete {
            assert!(
                sub.messages
                    .iter()
                    .any(|m| m.text.starts_with("# Findings on"))
            );
            break;
        }
        assert!(opened < 200, "the child never finished");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Each opening read on from the stored cursor, never from the start again.
    let asked = s.stream_requests(&child.session_id);
    assert_eq!(asked.len(), opened);
    assert_eq!(asked[0].start_index, Some(0));
    assert!(
        asked[1..].iter().all(|r| r.start_index > Some(0)),
        "{asked:?}"
    );
    s.stop().await;
}

/// A server that cuts every stream inside its first record: opening the sub-agent says so
/// plainly, asks once per opening and never on its own, and keeps nothing partial; once
/// the cuts stop, the next opening reads it whole.
#[tokio::test(flavor = "multi_thread")]
async fn a_sub_agent_stream_cut_before_any_record_is_said_and_not_asked_again() {
    for protocol in [MissionProtocol::EveB, MissionProtocol::Eve27] {
        for route in [ChildRoute::Parent, ChildRoute::Own] {
            let what = format!("{protocol:?} {route:?}");
            let s = sandbox(protocol, route).await;
            let store = MissionStore::in_memory().unwrap();
            let (id, child) = delegated(&s, &store).await;
            s.knobs().set(|k| k.stream_content_length = 24);
            let open = || {
                subagents::open(
                    &store,
                    Ok(client(&s)),
                    &id,
                    &child.call_id,
                    ChildLimits::default(),
                )
            };
            let err = open().await.expect_err("nothing whole was read");
            assert_eq!(err.code(), ErrorCode::Network, "{what}: {err:?}");
            assert!(
                err.message()
                    .contains("ended the sub-agent's stream before a whole record"),
                "{what}: {}",
                err.message()
            );
            assert_eq!(s.knobs().cuts_made(), 1, "{what}: one request an opening");
            tokio::time::sleep(Duration::from_millis(300)).await;
            assert_eq!(s.knobs().cuts_made(), 1, "{what}: none by itself");

            s.knobs().set(|k| k.stream_content_length = 0);
            let sub = open().await.unwrap_or_else(|e| panic!("{what}: {e:?}"));
            assert_eq!(sub.status, MissionStatus::Complete, "{what}");
            assert!(sub.stale.is_none(), "{what}");
            assert!(
                sub.messages[0].text.starts_with("Check every finding on"),
                "{what}: read from its first record, nothing partial kept before"
            );
            s.stop().await;
        }
    }
}
