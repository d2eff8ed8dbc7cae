//! The sandboxes the suites start, one function per kind, so a test says what it needs
//! (a protocol, how long a mission is) and not how a sandbox is configured.

use casebook_sandbox::{MissionProtocol, Pace, RunningSandbox, SandboxConfig};

/// A sandbox whose missions speak `protocol` and play about `events` records each with no
/// pause between them: what a test that follows missions to their end starts.
pub async fn missions(protocol: MissionProtocol, events: u64) -> RunningSandbox {
    casebook_sandbox::start(SandboxConfig {
        pace: Pace::Instant,
        mission_pace_ms: Some(0),
        mission_events: Some(events),
        mission_protocol: protocol,
        ..Default::default()
    })
    .await
    .expect("a sandbox starts on loopback")
}
