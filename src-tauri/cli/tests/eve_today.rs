//! The CLI against eve as today's releases speak it: a mission that delegates to a
//! sub-agent followed to its report, and a history past eve's retention said plainly,
//! with what this computer stored still readable.

use casebook_sandbox::{MissionProtocol, Pace, SandboxConfig};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_casebook");

fn casebook(args: &[&str], url: &str, key: &str, data: &std::path::Path) -> Output {
    Command::new(BIN)
        .arg("--base-url")
        .arg(url)
        .args(args)
        .env_remove("CASEBOOK_BASE_URL")
        .env_remove("CASEBOOK_CITATIONS_KEY")
        .env("CASEBOOK_INVESTIGATIONS_KEY", key)
        .env("CASEBOOK_DATA_DIR", data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_delegating_mission_reaches_its_report_and_an_expired_history_is_said_plainly() {
    for protocol in [
        MissionProtocol::EveA,
        MissionProtocol::EveB,
        MissionProtocol::Eve27,
    ] {
        let service = casebook_sandbox::start(SandboxConfig {
            pace: Pace::Instant,
            mission_pace_ms: Some(0),
            mission_events: Some(40),
            mission_protocol: protocol,
            ..Default::default()
        })
        .await
        .unwrap();
        service.faults().set_delegate(true);
        let (url, key) = (service.base_url().to_owned(), service.key().to_owned());
        let here = tempfile::tempdir().unwrap();
        let run = |args: &[&str], data: &std::path::Path| {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            let (url, key, data) = (url.clone(), key.clone(), data.to_owned());
            tokio::task::spawn_blocking(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                casebook(&args, &url, &key, &data)
            })
        };
        let started = ok(&run(
            &[
                "mission",
                "start",
                "--objective",
                "Does shade reduce heat stroke?",
                "--follow",
                "--json",
            ],
            here.path(),
        )
        .await
        .unwrap());
        let first: serde_json::Value =
            serde_json::from_str(started.lines().next().unwrap()).unwrap();
        let sid = first["sessionId"].as_str().unwrap().to_owned();
        let shown = ok(&run(&["mission", "show", &sid, "--json"], here.path())
            .await
            .unwrap());
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
        let out = run(&["mission", "watch", &sid], elsewhere.path())
            .await
            .unwrap();
        assert!(!out.status.success(), "{protocol:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("expired"), "{protocol:?}: {said}");
        assert_eq!(
            service.stream_requests(&sid).len(),
            asked + 1,
            "asked again"
        );
        // What this computer stored stays readable.
        let shown = ok(&run(&["mission", "show", &sid], here.path()).await.unwrap());
        assert!(shown.contains("Findings"), "{shown}");
        let md = ok(
            &run(&["mission", "export", &sid, "--format", "md"], here.path())
                .await
                .unwrap(),
        );
        assert!(md.contains("Findings"), "{protocol:?}");
    }
}

/// A token goes back only to eve's token generation: B's waiting records may name the
/// session id as their token (eve 0.31 and later) and its routes refuse one, so a reply
/// sends none; A wants the newest, also from a computer that never saw the create answer.
#[tokio::test(flavor = "multi_thread")]
async fn a_reply_carries_a_token_only_to_the_generation_that_wants_one() {
    for protocol in [MissionProtocol::EveA, MissionProtocol::EveB] {
        let service = casebook_sandbox::start(SandboxConfig {
            pace: Pace::Instant,
            mission_pace_ms: Some(0),
            mission_events: Some(30),
            mission_protocol: protocol,
            ..Default::default()
        })
        .await
        .unwrap();
        service.faults().set_session_id_tokens(true);
        let (url, key) = (service.base_url().to_owned(), service.key().to_owned());
        let here = tempfile::tempdir().unwrap();
        let run = |args: &[&str], data: &std::path::Path| {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            let (url, key, data) = (url.clone(), key.clone(), data.to_owned());
            tokio::task::spawn_blocking(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                casebook(&args, &url, &key, &data)
            })
        };
        let started = ok(&run(
            &[
                "mission",
                "start",
                "--objective",
                "Does shade reduce heat stroke?",
                "--follow",
                "--json",
            ],
            here.path(),
        )
        .await
        .unwrap());
        let first: serde_json::Value =
            serde_json::from_str(started.lines().next().unwrap()).unwrap();
        let sid = first["sessionId"].as_str().unwrap().to_owned();
        if protocol == MissionProtocol::EveB {
            assert!(
                started.contains(&format!("\"continuationToken\":\"{sid}\"")),
                "the knob names the session id as the token"
            );
        }
        ok(&run(
            &[
                "mission",
                "reply",
                &sid,
                "--message",
                "And in Europe?",
                "--follow",
            ],
            here.path(),
        )
        .await
        .unwrap());
        // Another computer that only watched the mission replies too.
        let elsewhere = tempfile::tempdir().unwrap();
        ok(&run(&["mission", "watch", &sid], elsewhere.path())
            .await
            .unwrap());
        ok(&run(
            &[
                "mission",
                "reply",
                &sid,
                "--message",
                "And in Asia?",
                "--follow",
            ],
            elsewhere.path(),
        )
        .await
        .unwrap());
    }
}
