//! The CLI against eve as today's releases speak it: a mission that delegates to a
//! sub-agent followed to its report, and a history past eve's retention said plainly,
//! with what this computer stored still readable.

mod common;

use casebook_sandbox::{MissionProtocol, Pace, SandboxConfig};
use common::{Cli, ok};

async fn sandbox(protocol: MissionProtocol) -> casebook_sandbox::RunningSandbox {
    casebook_sandbox::start(SandboxConfig {
        pace: Pace::Instant,
        mission_pace_ms: Some(0),
        mission_events: Some(40),
        mission_protocol: protocol,
        ..Default::default()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_delegating_mission_reaches_its_report_and_an_expired_history_is_said_plainly() {
    for protocol in [
        MissionProtocol::EveA,
        MissionProtocol::EveB,
        MissionProtocol::Eve27,
    ] {
        let service = sandbox(protocol).await;
        service.faults().set_delegate(true);
        let cli = Cli::new(&service);
        let here = tempfile::tempdir().unwrap();
        let (_, sid) = cli
            .start_following("Does shade reduce heat stroke?", here.path())
            .await;
        let shown = ok(&cli
            .run(&["mission", "show", &sid, "--json"], here.path())
            .await);
        let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
        // Followed past the sub-agent's pause to the report, never waiting on the person.
        assert_eq!(shown["status"], "waiting", "{protocol:?}: {shown}");
        assert!(shown["pending"].as_array().unwrap().is_empty());
        let texts: Vec<&str> = shown["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["text"].as_str())
            .collect();
        assert!(
            texts.iter().any(|t| t.contains("# Findings")),
            "{protocol:?}: no report in {texts:?}"
        );
        assert!(
            shown["items"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| { i["step"]["kind"] == "agent" && i["step"]["name"] == "researcher" }),
            "{protocol:?}: no sub-agent step"
        );

        // Another computer asks for the whole history after eve let it expire.
        service.faults().set_history_expired(true);
        let elsewhere = tempfile::tempdir().unwrap();
        let asked = service.stream_requests(&sid).len();
        let out = cli.run(&["mission", "watch", &sid], elsewhere.path()).await;
        assert!(!out.status.success(), "{protocol:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("expired"), "{protocol:?}: {said}");
        assert_eq!(
            service.stream_requests(&sid).len(),
            asked + 1,
            "asked again"
        );
        // What this computer stored stays readable.
        let shown = ok(&cli.run(&["mission", "show", &sid], here.path()).await);
        assert!(shown.contains("Findings"), "{shown}");
        let export = ["mission", "export", &sid, "--format", "md"];
        let md = ok(&cli.run(&export, here.path()).await);
        assert!(md.contains("Findings"), "{protocol:?}");
    }
}

/// A token goes back only to eve's token generation: B's waiting records may name the
/// session id as their token (eve 0.31 and later) and its routes refuse one, so a reply
/// sends none; A wants the newest, also from a computer that never saw the create answer.
#[tokio::test(flavor = "multi_thread")]
async fn a_reply_carries_a_token_only_to_the_generation_that_wants_one() {
    for protocol in [MissionProtocol::EveA, MissionProtocol::EveB] {
        let service = sandbox(protocol).await;
        service.faults().set_session_id_tokens(true);
        let cli = Cli::new(&service);
        let here = tempfile::tempdir().unwrap();
        let (started, sid) = cli
            .start_following("Does shade reduce heat stroke?", here.path())
            .await;
        if protocol == MissionProtocol::EveB {
            assert!(
                started.contains(&format!("\"continuationToken\":\"{sid}\"")),
                "the knob names the session id as the token"
            );
        }
        let reply = [
            "mission",
            "reply",
            &sid,
            "--message",
            "And in Europe?",
            "--follow",
        ];
        ok(&cli.run(&reply, here.path()).await);
        // Another computer that only watched the mission replies too.
        let elsewhere = tempfile::tempdir().unwrap();
        ok(&cli.run(&["mission", "watch", &sid], elsewhere.path()).await);
        let reply = [
            "mission",
            "reply",
            &sid,
            "--message",
            "And in Asia?",
            "--follow",
        ];
        ok(&cli.run(&reply, elsewhere.path()).await);
    }
}
