//! The CLI against the sandbox speaking eve, in each generation: a mission that asks a
//! question, answered by option; a reply whose turn streams into the same mission; show,
//! cancel, and a watch from another computer that reads the whole log and stops at the
//! newest turn.

mod common;

use casebook_sandbox::MissionProtocol;
use common::ok;
use std::process::Output;

fn casebook(args: &[&str], url: &str, key: &str, data: &std::path::Path) -> Output {
    common::casebook(args, url, key, data).output().unwrap()
}

/// The `--json` lines of a followed command: `{"id", "event", "data"}` each.
fn records(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("event").is_some())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_a_reply_and_a_watch_from_elsewhere_in_each_generation() {
    for protocol in [
        MissionProtocol::EveA,
        MissionProtocol::EveB,
        MissionProtocol::Eve27,
    ] {
        let service = casebook_testsupport::sandbox::missions(protocol, 120).await;
        let (url, key) = (service.base_url().to_owned(), service.key().to_owned());
        let data = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            let (url, key, data) = (url.clone(), key.clone(), data.path().to_owned());
            tokio::task::spawn_blocking(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                casebook(&args, &url, &key, &data)
            })
        };
        let started = ok(&run(&[
            "mission",
            "start",
            "--objective",
            "An ambiguous question: does heat raise hospital admissions?",
            "--follow",
            "--json",
        ])
        .await
        .unwrap());
        let first: serde_json::Value =
            serde_json::from_str(started.lines().next().unwrap()).unwrap();
        let sid = first["sessionId"].as_str().unwrap().to_owned();
        let lines = records(&started);
        assert!(!lines.is_empty(), "{protocol:?}");
        for l in &lines {
            let event = l["event"].as_str().unwrap();
            assert!(
                !event.is_empty() && !event.starts_with('$'),
                "{protocol:?}: {l}"
            );
            assert!(l.get("data").is_some() && l.get("id").is_some(), "{l}");
        }
        if protocol == MissionProtocol::EveB {
            assert!(
                lines
                    .iter()
                    .all(|l| l["id"].as_str().is_some_and(|i| i.starts_with("evt_")))
            );
        }

        let show: serde_json::Value =
            serde_json::from_str(&ok(&run(&["mission", "show", &sid, "--json"])
                .await
                .unwrap()))
            .unwrap();
        assert_eq!(show["status"], "needs_input", "{protocol:?}: {show}");
        let request = &show["pending"][0];
        let rid = request["requestId"].as_str().unwrap().to_owned();
        let option = request["options"][0]["id"].as_str().unwrap().to_owned();
        assert!(
            show["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["role"] == "assistant"
                    && m["text"].as_str().is_some_and(|t| t.len() > 20)),
            "{protocol:?}: the plan, assembled from its deltas: {show}"
        );

        let answered = ok(&run(&[
            "mission",
            "answer",
            &sid,
            "--request",
            &rid,
            "--option",
            &option,
            "--follow",
            "--json",
        ])
        .await
        .unwrap());
        let after = records(&answered);
        assert!(
            after
                .iter()
                .any(|l| l["event"] == "input.resolved" || l["event"] == "interaction.settled"),
            "{protocol:?}: {answered}"
        );
        let show: serde_json::Value =
            serde_json::from_str(&ok(&run(&["mission", "show", &sid, "--json"])
                .await
                .unwrap()))
            .unwrap();
        assert_eq!(show["status"], "waiting", "{protocol:?}: {show}");
        assert_eq!(show["pending"], serde_json::json!([]));

        let replied = ok(&run(&[
            "mission",
            "reply",
            &sid,
            "--message",
            "And in Europe? “é” 🦀",
            "--follow",
            "--json",
        ])
        .await
        .unwrap());
        assert!(
            !records(&replied).is_empty(),
            "{protocol:?}: the reply's turn streamed"
        );
        let show: serde_json::Value =
            serde_json::from_str(&ok(&run(&["mission", "show", &sid, "--json"])
                .await
                .unwrap()))
            .unwrap();
        let messages = show["messages"].as_array().unwrap();
        assert!(
            messages
                .iter()
                .any(|m| m["role"] == "user" && m["text"] == "And in Europe? “é” 🦀"),
            "{protocol:?}: {show}"
        );
        assert_eq!(
            messages.last().unwrap()["role"],
            "assistant",
            "{protocol:?}"
        );

        let cancelled = ok(&run(&["mission", "cancel", &sid]).await.unwrap());
        if protocol != MissionProtocol::EveB {
            // eve before 0.31 accepts every cancel; eve 1.x too (a delivery of its own).
            assert!(cancelled.contains("accepted"), "{cancelled}");
        } else {
            assert!(
                cancelled.contains("nothing to cancel"),
                "{protocol:?}: {cancelled}"
            );
        }

        // Another computer, knowing only the id: the whole log, to the newest turn's end.
        let elsewhere = tempfile::tempdir().unwrap();
        let (u, k, e) = (url.clone(), key.clone(), elsewhere.path().to_owned());
        let sid2 = sid.clone();
        let watched = tokio::task::spawn_blocking(move || {
            casebook(&["mission", "watch", &sid2, "--json"], &u, &k, &e)
        })
        .await
        .unwrap();
        let all = records(&ok(&watched));
        let ends = all
            .iter()
            .filter(|l| {
                matches!(
                    l["event"].as_str(),
                    Some("session.waiting" | "turn.settled" | "turn.waiting" | "turn.paused")
                )
            })
            .count();
        assert!(
            ends >= 3,
            "{protocol:?}: read past older turns' ends ({ends})"
        );
        let said = all.iter().any(|l| {
            l["data"]["message"] == "And in Europe? “é” 🦀"
                || l["data"]["parts"][0]["text"] == "And in Europe? “é” 🦀"
        });
        assert!(
            said,
            "{protocol:?}: the reply is in the log read from elsewhere"
        );
        service.stop().await;
    }
}
