//! The CLI against eve as today's releases speak it: a mission that delegates to a
//! sub-agent followed to its report, and a history past eve's retention said plainly,
//! with what this computer stored still readable.

mod common;

use casebook_sandbox::MissionProtocol;
use casebook_testsupport::sandbox::missions;
use common::{Cli, ok};

#[tokio::test(flavor = "multi_thread")]
async fn a_delegating_mission_reaches_its_report_and_an_expired_history_is_said_plainly() {
    for protocol in [
        MissionProtocol::EveA,
        MissionProtocol::EveB,
        MissionProtocol::Eve27,
    ] {
        let service = missions(protocol, 40).await;
        service.knobs().set(|k| k.delegate = true);
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
        service.knobs().set(|k| k.history_expired = true);
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
        let service = missions(protocol, 40).await;
        service.knobs().set(|k| k.session_id_tokens = true);
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

/// A sub-agent's step opens to its own conversation with `mission show --agent`: its
/// stream is read then and only then, through the parent's route or its own stream path,
/// whichever the server has (asserted from the sandbox's log of each route).
#[tokio::test(flavor = "multi_thread")]
async fn a_sub_agent_is_shown_by_its_call_reading_its_stream_only_then() {
    use casebook_sandbox::{ChildRoute, ChildStreamRequest};
    for (protocol, route) in [
        (MissionProtocol::EveB, ChildRoute::Own),
        (MissionProtocol::Eve27, ChildRoute::Parent),
        (MissionProtocol::Eve27, ChildRoute::Own),
        (MissionProtocol::EveB, ChildRoute::Both),
    ] {
        let what = format!("{protocol:?} {route:?}");
        let service = missions(protocol, 40).await;
        service.knobs().set(|k| k.delegate = true);
        service.knobs().set(|k| k.child_route = route);
        let cli = Cli::new(&service);
        let here = tempfile::tempdir().unwrap();
        let (_, sid) = cli
            .start_following("Does shade reduce heat stroke?", here.path())
            .await;
        let shown = ok(&cli
            .run(&["mission", "show", &sid, "--json"], here.path())
            .await);
        let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
        let child = shown["items"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|i| i["step"].get("child"))
            .unwrap_or_else(|| panic!("{what}: no step opens a sub-agent"))
            .clone();
        let call = child["callId"].as_str().unwrap();
        let child_id = child["sessionId"].as_str().unwrap();
        let text = ok(&cli.run(&["mission", "show", &sid], here.path()).await);
        assert!(text.contains(&format!("--agent {call}")), "{what}: {text}");
        assert!(
            service.child_stream_requests(child_id).is_empty(),
            "{what}: read before it was opened"
        );

        let out = ok(&cli
            .run(
                &["mission", "show", &sid, "--agent", call, "--json"],
                here.path(),
            )
            .await);
        let sub: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(sub["name"], "researcher", "{what}");
        assert_eq!(sub["sessionId"], child_id);
        assert_eq!(sub["status"], "complete", "{what}: {sub}");
        let said: Vec<&str> = sub["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["text"].as_str())
            .collect();
        assert!(
            said[0].starts_with("Check every finding on"),
            "{what}: {said:?}"
        );
        assert!(
            said.iter().any(|t| t.starts_with("# Findings on")),
            "{what}"
        );
        let search = sub["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["step"]["name"] == "web_search")
            .unwrap_or_else(|| panic!("{what}: no search step"));
        let url = search["step"]["sources"][0]["url"].as_str().unwrap();
        let parent_route = ChildStreamRequest {
            via_parent: true,
            served: route != ChildRoute::Own,
        };
        let mut expected = vec![parent_route];
        if route == ChildRoute::Own {
            expected.push(ChildStreamRequest {
                via_parent: false,
                served: true,
            });
        }
        assert_eq!(service.child_stream_requests(child_id), expected, "{what}");

        // In words, with the service gone: what was read is kept, and it had finished.
        let gone = Cli::new(&service);
        service.stop().await;
        let text = ok(&gone
            .run(&["mission", "show", &sid, "--agent", child_id], here.path())
            .await);
        assert!(
            text.contains("[researcher]\n# Findings on"),
            "{what}: {text}"
        );
        assert!(text.contains(&format!("<{url}>")), "{what}: {text}");
        let out = gone
            .run(
                &["mission", "show", &sid, "--agent", "call_nope"],
                here.path(),
            )
            .await;
        assert!(!out.status.success());
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(call), "{what}: {said}");
    }
}

/// eve's `409 session_stranded` (after an upgrade, another eve version owns the session):
/// a reply is refused in plain words, a watch stops at once and marks the mission failed,
/// and what this computer stored stays readable. A stranded session is the sandbox's
/// knob: the real server reaches it only across releases.
#[tokio::test(flavor = "multi_thread")]
async fn a_stranded_session_is_said_plainly_and_its_history_stays_readable() {
    for protocol in [MissionProtocol::EveB, MissionProtocol::Eve27] {
        let service = missions(protocol, 40).await;
        let (cli, here, sid) = common::followed(&service, "Does shade reduce heat stroke?").await;
        service.knobs().set(|k| k.stranded = true);
        let out = cli
            .run(
                &["mission", "reply", &sid, "--message", "And in Europe?"],
                here.path(),
            )
            .await;
        assert!(!out.status.success(), "{protocol:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("it is stranded"), "{protocol:?}: {said}");
        let out = cli.run(&["mission", "watch", &sid], here.path()).await;
        assert!(!out.status.success(), "{protocol:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("it is stranded"), "{protocol:?}: {said}");
        let asked = service.stream_requests(&sid).len();
        let shown = ok(&cli
            .run(&["mission", "show", &sid, "--json"], here.path())
            .await);
        let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(shown["status"], "failed", "{protocol:?}");
        assert!(
            shown["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["role"] == "assistant"),
            "{protocol:?}: the stored history is shown: {shown}"
        );
        // Final: a later watch does not ask again.
        ok(&cli.run(&["mission", "watch", &sid], here.path()).await);
        assert_eq!(service.stream_requests(&sid).len(), asked, "{protocol:?}");
    }
}

/// A reply whose answer was cut (the service took it, the connection dropped before the
/// 202 arrived) is sent once more with the same `idempotencyKey`, and eve 1.x takes the
/// two as one delivery: one message in the conversation, and one turn that answers it.
#[tokio::test(flavor = "multi_thread")]
async fn a_reply_whose_answer_was_cut_is_sent_again_with_its_key_and_is_one_message() {
    let service = missions(MissionProtocol::Eve27, 40).await;
    let (cli, here, sid) = common::followed(&service, "Does shade reduce heat stroke?").await;
    service.knobs().set(|k| k.cut_answers = 1);
    let said = "Only once, please.";
    ok(&cli
        .run(
            &["mission", "reply", &sid, "--message", said, "--follow"],
            here.path(),
        )
        .await);
    let posts = service.posts(&sid);
    assert_eq!(posts.len(), 2, "sent again after the cut: {posts:?}");
    let key = |i: usize| {
        posts[i]["body"]["idempotencyKey"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(key(0), key(1), "{posts:?}");
    let shown = ok(&cli
        .run(&["mission", "show", &sid, "--json"], here.path())
        .await);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let messages = shown["messages"].as_array().unwrap();
    let sent = messages
        .iter()
        .filter(|m| m["role"] == "user" && m["text"] == said)
        .count();
    assert_eq!(sent, 1, "{shown}");
    assert_eq!(shown["status"], "waiting", "{shown}");
    assert_eq!(messages.last().unwrap()["role"], "assistant", "{shown}");
}
