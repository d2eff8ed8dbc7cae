//! The CLI against eve's approvals and sign-ins (the sandbox's `approval`, `signIn` and
//! `signInSuperseded` knobs), in generations B and 27: `show` lists the approval's options
//! and the sign-in's link, code and expiry; `answer` sends exactly one `inputResponses`
//! naming the interaction; a `reply` while an approval is pending withdraws it; `watch`
//! follows through a sign-in to the report once the link is visited, with nothing POSTed.

mod common;

use casebook_sandbox::MissionProtocol;
use casebook_testsupport::sandbox::missions;
use common::{Cli, ok};
use serde_json::{Value, json};
use std::time::Duration;

async fn shown(cli: &Cli, sid: &str, data: &std::path::Path) -> Value {
    let out = ok(&cli.run(&["mission", "show", sid, "--json"], data).await);
    serde_json::from_str(&out).unwrap()
}

fn texts(shown: &Value) -> Vec<String> {
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_is_answered_by_its_interaction_or_withdrawn_by_a_reply() {
    for protocol in [MissionProtocol::EveB, MissionProtocol::Eve27] {
        // eve 1.x says no with `deny`, B with `cancel`.
        let no = if protocol == MissionProtocol::Eve27 {
            "deny"
        } else {
            "cancel"
        };
        for answer in ["approve", no, "reply"] {
            let service = missions(protocol, 40).await;
            service.knobs().set(|k| k.approval = true);
            let cli = Cli::new(&service);
            let here = tempfile::tempdir().unwrap();
            let (_, sid) = cli
                .start_following("Does shade reduce heat stroke?", here.path())
                .await;
            let before = shown(&cli, &sid, here.path()).await;
            assert_eq!(before["status"], "needs_input", "{protocol:?}: {before}");
            let pending = &before["pending"][0];
            let kind = if protocol == MissionProtocol::Eve27 {
                "approval"
            } else {
                "tool-approval"
            };
            assert_eq!(pending["kind"], kind);
            assert_eq!(pending["title"], "Read a source?");
            let options = if protocol == MissionProtocol::Eve27 {
                // eve 1.x names no style: drawn as eve's own client draws them.
                json!([
                    {"id": "approve", "label": "Approve", "style": "primary"},
                    {"id": "deny", "label": "Deny", "style": "danger"},
                ])
            } else {
                json!([
                    {"id": "approve", "label": "Approve", "style": "primary"},
                    {"id": "cancel", "label": "Cancel", "description": "The agent goes on without this source.", "style": "danger"},
                ])
            };
            assert_eq!(pending["options"], options);
            let request = pending["requestId"].as_str().unwrap().to_owned();
            let text = ok(&cli.run(&["mission", "show", &sid], here.path()).await);
            assert!(text.contains("--option approve  Approve"), "{text}");
            assert!(text.contains(&format!("(request {request})")), "{text}");

            let (args, body): (Vec<&str>, Value) = match answer {
                "reply" => (
                    vec![
                        "mission",
                        "reply",
                        &sid,
                        "--message",
                        "Skip it.",
                        "--follow",
                    ],
                    json!({"message": "Skip it."}),
                ),
                option => (
                    vec![
                        "mission",
                        "answer",
                        &sid,
                        "--request",
                        &request,
                        "--option",
                        option,
                        "--follow",
                    ],
                    if protocol == MissionProtocol::Eve27 {
                        json!({"answers": [{"interactionId": request, "optionId": option}]})
                    } else {
                        json!({"inputResponses": [{"requestId": request, "optionId": option}]})
                    },
                ),
            };
            ok(&cli.run(&args, here.path()).await);
            // Exactly what the sandbox received: one POST, this body.
            assert_eq!(
                common::posted(&service, &sid, protocol),
                [json!({"route": "", "body": body})],
                "{protocol:?} {answer}"
            );
            let after = shown(&cli, &sid, here.path()).await;
            assert_eq!(after["status"], "waiting", "{protocol:?} {answer}: {after}");
            assert!(after["pending"].as_array().unwrap().is_empty());
            assert!(
                texts(&after).iter().any(|t| t.contains("# Findings")),
                "{protocol:?} {answer}"
            );
            let item = after["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["request"]["requestId"] == request.as_str())
                .unwrap();
            let words = match answer {
                "approve" => "Approved",
                "cancel" | "deny" => "Declined",
                _ => "Withdrawn by your message",
            };
            assert_eq!(item["request"]["outcomeText"], words, "{protocol:?}");
            let text = ok(&cli.run(&["mission", "show", &sid], here.path()).await);
            assert!(text.contains(&format!("({words})")), "{text}");
            // The source read the approval held: run, rejected or dropped.
            let read = after["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["step"]["name"] == "read_source")
                .unwrap();
            let status = read["step"]["status"].as_str().unwrap();
            match answer {
                "approve" => assert!(["completed", "failed"].contains(&status)),
                "cancel" | "deny" => assert_eq!(status, "rejected"),
                _ => assert_eq!(status, "cancelled"),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn watch_follows_through_a_sign_in_to_the_report_once_the_link_is_visited() {
    for protocol in [MissionProtocol::EveB, MissionProtocol::Eve27] {
        let service = missions(protocol, 40).await;
        service.knobs().set(|k| k.sign_in = true);
        service.knobs().set(|k| k.sign_in_superseded = true);
        let cli = Cli::new(&service);
        let here = tempfile::tempdir().unwrap();
        let out = ok(&cli
            .run(
                &[
                    "mission",
                    "start",
                    "--objective",
                    "Heat and my notes",
                    "--json",
                ],
                here.path(),
            )
            .await);
        let sid = serde_json::from_str::<Value>(out.lines().next().unwrap()).unwrap()["sessionId"]
            .as_str()
            .unwrap()
            .to_owned();
        let watch = {
            let cli = Cli::new(&service);
            let (sid, dir) = (sid.clone(), here.path().to_owned());
            tokio::spawn(async move { cli.run(&["mission", "watch", &sid], &dir).await })
        };
        // The watch stores the sign-in as it arrives, and keeps following.
        let mut sign_in = Value::Null;
        for _ in 0..200 {
            let now = shown(&cli, &sid, here.path()).await;
            if now["signIns"].as_array().is_some_and(|s| !s.is_empty()) {
                sign_in = now["signIns"][0].clone();
                let cards = now["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|i| i["kind"] == "sign-in")
                    .count();
                if sign_in["userCode"].is_string() && cards == 1 {
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let url = sign_in["url"].as_str().expect("a sign-in link").to_owned();
        let code = sign_in["userCode"].as_str().unwrap().to_owned();
        assert!(url.starts_with(&format!("{}/_sandbox/sign-in/{sid}/", service.base_url())));
        // The superseded attempt closed quietly: the card shows the second attempt.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = shown(&cli, &sid, here.path()).await;
        assert_eq!(now["signIns"].as_array().unwrap().len(), 1, "{now}");
        assert_eq!(now["signIns"][0]["url"], url.as_str(), "the newest attempt");
        assert!(
            now["pending"].as_array().unwrap().is_empty(),
            "nothing to answer"
        );
        assert!(
            !watch.is_finished(),
            "{protocol:?}: the watch stopped at the sign-in"
        );
        let text = ok(&cli.run(&["mission", "show", &sid], here.path()).await);
        assert!(text.contains(&format!("open {url}")), "{text}");
        assert!(text.contains(&format!("enter the code {code}")), "{text}");
        assert!(text.contains("  before 20"), "{text}");
        assert!(text.contains("allow Casebook's research agent"), "{text}");
        assert!(!text.contains("failed"), "{text}");

        // The person signs in in the browser.
        let page = reqwest::get(&url).await.unwrap();
        assert_eq!(page.status(), 200);
        let out = tokio::time::timeout(Duration::from_secs(60), watch)
            .await
            .expect("the watch ends after the turn's end")
            .unwrap();
        ok(&out);
        let after = shown(&cli, &sid, here.path()).await;
        assert_eq!(after["status"], "waiting", "{protocol:?}: {after}");
        assert!(
            texts(&after).iter().any(|t| t.contains("# Findings")),
            "{protocol:?}"
        );
        let card = after["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["kind"] == "sign-in")
            .unwrap();
        assert_eq!(card["signIn"]["outcomeText"], "Signed in");
        // Nothing was ever POSTed for the sign-in.
        assert!(service.posts(&sid).is_empty(), "{:?}", service.posts(&sid));
    }
}
