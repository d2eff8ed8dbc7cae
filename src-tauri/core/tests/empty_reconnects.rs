//! Reconnects that make progress or stop: a server that cuts every stream response inside
//! its first record is asked again with a growing pause, and after a bounded number of
//! empty tries the watch stops, saying why; one that cuts every response after a record
//! makes progress each time and is followed to the turn's end. The sandbox's knobs make
//! both, in the seeds' dialect and in each of eve's generations.

mod common;

use casebook_core::ErrorCode;
use casebook_core::missions::client::{InvestigationClient, MissionSpec};
use casebook_core::missions::protocol::{self, TurnEnd};
use casebook_core::missions::stream::{WatchOptions, WatchUpdate};
use casebook_sandbox::{MissionProtocol, RunningSandbox};
use common::investigation_client;
use std::time::Duration;

const PROTOCOLS: [MissionProtocol; 4] = [
    MissionProtocol::Legacy,
    MissionProtocol::EveA,
    MissionProtocol::EveB,
    MissionProtocol::Eve27,
];

async fn sandbox(
    protocol: MissionProtocol,
    events: u64,
) -> (RunningSandbox, InvestigationClient, String) {
    let s = casebook_testsupport::sandbox::missions(protocol, events).await;
    let c = investigation_client(&s);
    let spec = MissionSpec::new("Does shade reduce heat stroke?", 2500);
    let sid = c.create_session(&spec).await.unwrap().session_id;
    (s, c, sid)
}

/// Back-off in milliseconds, so the bounded tries take a moment, not minutes.
fn quick() -> WatchOptions {
    WatchOptions {
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(80),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_cut_inside_its_first_record_every_time_stops_with_a_reason() {
    for protocol in PROTOCOLS {
        let (s, c, sid) = sandbox(protocol, 30).await;
        // Past the SSE `retry:` line and eve's opening records, short of any whole record.
        s.knobs().set(|k| k.stream_content_length = 24);
        let mut pauses = Vec::new();
        let mut events = 0;
        let options = quick();
        let tries = options.max_empty_reconnects;
        let err = c
            .watch(&sid, options, |u| match u {
                WatchUpdate::Reconnecting { after_ms, .. } => pauses.push(after_ms),
                WatchUpdate::Event { .. } => events += 1,
                _ => {}
            })
            .await
            .expect_err("a stream that never brings a whole record must stop");
        assert_eq!(err.code(), ErrorCode::Network, "{protocol:?}: {err:?}");
        assert!(
            err.message()
                .contains("keeps ending the mission's stream before a whole record"),
            "{protocol:?}: {}",
            err.message()
        );
        assert!(
            err.message().contains(&format!("after {tries} tries")),
            "{}",
            err.message()
        );
        assert_eq!(events, 0, "{protocol:?}");
        assert_eq!(s.knobs().cuts_made(), u64::from(tries), "{protocol:?}");
        // Each empty try waits longer, up to the cap (equal jitter: at least half of it);
        // never less than the seeds' SSE `retry:` (1 s).
        assert_eq!(pauses.len() as u32, tries - 1, "{protocol:?}");
        if protocol != MissionProtocol::Legacy {
            assert!(pauses[0] < 20, "{protocol:?}: {pauses:?}");
        }
        assert!(
            pauses.iter().skip(4).all(|p| *p >= 40),
            "{protocol:?}: {pauses:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_cut_after_each_record_makes_progress_and_is_followed_to_its_end() {
    for protocol in PROTOCOLS {
        let (s, c, sid) = sandbox(protocol, 10).await;
        // eve's sessions write several records an event: a cut after a few of them still
        // leaves many cuts.
        let after = if protocol == MissionProtocol::Legacy {
            1
        } else {
            8
        };
        s.knobs().set(|k| k.drop_stream_after = after);
        let mut reconnects = 0;
        let options = WatchOptions {
            max_empty_reconnects: 3,
            ..quick()
        };
        let end = c
            .watch(&sid, options, |u| {
                if let WatchUpdate::Reconnecting { .. } = u {
                    reconnects += 1;
                }
            })
            .await
            .unwrap_or_else(|e| panic!("{protocol:?}: {e:?}"));
        let last = end
            .terminal()
            .unwrap_or_else(|| panic!("{protocol:?}: {end:?}"));
        assert!(
            matches!(
                protocol::turn_end(last),
                Some(TurnEnd::Waiting | TurnEnd::Complete)
            ),
            "{protocol:?}: {last:?}"
        );
        // More cuts than the empty-try bound: each brought a record.
        assert!(reconnects > 3, "{protocol:?}: {reconnects}");
    }
}
