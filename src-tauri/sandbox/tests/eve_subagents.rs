//! A delegated sub-agent's own session (the `delegate` fault), served at its parent's
//! route and at its own stream path as the `childRoute` knob says, in each eve
//! generation, read with a plain HTTP client.

mod common;

use casebook_sandbox::{ChildStreamRequest, MissionProtocol, RunningSandbox, SandboxConfig, start};
use common::{PATIENCE, client, data_of, post_json, set_faults};
use serde_json::{Value, json};
use std::time::Duration;

const ALL: [MissionProtocol; 3] = [
    MissionProtocol::EveA,
    MissionProtocol::EveB,
    MissionProtocol::Eve27,
];

async fn sandbox(proto: MissionProtocol, faults: Value) -> RunningSandbox {
    let sb = start(SandboxConfig {
        mission_protocol: proto,
        ..common::config()
    })
    .await
    .expect("sandbox starts");
    let mut body = json!({"leaseSeconds": 1, "delegate": true});
    body.as_object_mut()
        .unwrap()
        .extend(faults.as_object().cloned().unwrap_or_default());
    assert_eq!(set_faults(&sb, body).await, 200);
    sb
}

/// A GET under the sandbox: its status and, for a 200, the body's records (lines that
/// are not `$eve` transport); otherwise the error body.
async fn get(sb: &RunningSandbox, path: &str) -> (u16, Vec<Value>) {
    let resp = client()
        .get(format!("{}{path}", sb.base_url()))
        .bearer_auth(sb.key())
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let body = tokio::time::timeout(PATIENCE, resp.text())
        .await
        .expect("the response ends")
        .unwrap();
    if status != 200 {
        return (
            status,
            vec![serde_json::from_str(&body).unwrap_or_default()],
        );
    }
    let records = body
        .split('\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .filter(|v| v.get("$eve").is_none())
        .collect();
    (status, records)
}

/// The parent's session id, and its child's id, call id and `streamPath`, once the
/// parent has started it.
async fn delegating(sb: &RunningSandbox) -> (String, String, String, String) {
    let parent = common::create(sb, json!({})).await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let (status, records) = get(sb, &format!("/eve/v1/session/{parent}/stream")).await;
        assert_eq!(status, 200);
        let started = data_of(&records, "agent.started");
        let opened = data_of(&records, "child.opened");
        if let Some(d) = started.first() {
            let s = |k: &str| d[k].as_str().unwrap().to_owned();
            return (parent, s("sessionId"), s("callId"), s("streamPath"));
        }
        if let Some(d) = opened.first() {
            let s = |p: &str| d.pointer(p).unwrap().as_str().unwrap().to_owned();
            return (parent, s("/sessionId"), s("/owner/callId"), s("/stream"));
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no sub-agent started"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What a child's records say: the task it was given, the sources its search found, and
/// its reply; and that its session ended.
fn child_says(proto: MissionProtocol, records: &[Value]) -> (String, Vec<String>, String, bool) {
    let urls = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["url"].as_str().map(str::to_owned))
            .collect()
    };
    if proto == MissionProtocol::Eve27 {
        let task = data_of(records, "delivery.consumed")[0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        let searches: Vec<String> = data_of(records, "call.requested")
            .iter()
            .filter(|c| c["capability"]["name"] == "web_search")
            .map(|c| c["callId"].as_str().unwrap().to_owned())
            .collect();
        let sources = data_of(records, "call.settled")
            .iter()
            .filter(|c| searches.iter().any(|s| c["callId"] == s.as_str()))
            .flat_map(|c| urls(&c["output"]["sources"]))
            .collect();
        let reply = data_of(records, "content.completed")
            .iter()
            .rfind(|c| c["phase"] == "reply")
            .map(|c| c["value"].as_str().unwrap().to_owned())
            .unwrap_or_default();
        let ended = !data_of(records, "session.ended").is_empty();
        return (task, sources, reply, ended);
    }
    let task = data_of(records, "message.received")[0]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    let sources = data_of(records, "action.result")
        .iter()
        .filter(|r| r["result"]["toolName"] == "web_search")
        .flat_map(|r| urls(&r["result"]["output"]["sources"]))
        .collect();
    let reply = data_of(records, "message.completed")
        .iter()
        .rfind(|m| m["finishReason"] == "stop")
        .map(|m| m["message"].as_str().unwrap().to_owned())
        .unwrap_or_default();
    let ended = !data_of(records, "session.completed").is_empty();
    (task, sources, reply, ended)
}

/// Reads the child's stream at `path` until its session has ended.
async fn read_child(sb: &RunningSandbox, path: &str) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let (status, records) = get(sb, path).await;
        assert_eq!(status, 200, "{path}: {records:?}");
        let ended = records.iter().any(|v| {
            v["type"] == "session.completed"
                || v["facts"]
                    .as_array()
                    .is_some_and(|f| f.iter().any(|f| f["type"] == "session.ended"))
        });
        if ended {
            return records;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the child never ended"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

const PARENT_SERVED: ChildStreamRequest = ChildStreamRequest {
    via_parent: true,
    served: true,
};
const OWN_SERVED: ChildStreamRequest = ChildStreamRequest {
    via_parent: false,
    served: true,
};

#[tokio::test]
async fn a_child_is_its_own_session_at_the_parent_route_and_its_own_in_each_generation() {
    for proto in ALL {
        let sb = sandbox(proto, json!({})).await;
        let (parent, child, call, stream_path) = delegating(&sb).await;
        assert_eq!(
            stream_path,
            format!("/eve/v1/session/{child}/stream"),
            "{proto:?}"
        );
        assert!(
            sb.child_stream_requests(&child).is_empty(),
            "{proto:?}: read before asked"
        );

        let via_parent = format!("/eve/v1/session/{parent}/subagents/{call}/{child}/stream");
        let records = read_child(&sb, &via_parent).await;
        let (task, sources, reply, ended) = child_says(proto, &records);
        assert!(
            task.starts_with("Check every finding on"),
            "{proto:?}: {task}"
        );
        assert!(
            !sources.is_empty(),
            "{proto:?}: the child's search found nothing"
        );
        assert!(reply.starts_with("# Findings on"), "{proto:?}: {reply}");
        assert!(ended, "{proto:?}");
        // Its own session: none of the parent's records, no second delegation.
        assert!(data_of(&records, "agent.started").is_empty(), "{proto:?}");
        assert!(data_of(&records, "child.opened").is_empty(), "{proto:?}");

        let own = read_child(&sb, &stream_path).await;
        assert_eq!(
            child_says(proto, &own),
            (task, sources, reply, true),
            "{proto:?}"
        );
        let asked = sb.child_stream_requests(&child);
        assert!(asked.len() >= 2, "{proto:?}: {asked:?}");
        assert_eq!(asked[0], PARENT_SERVED, "{proto:?}");
        assert_eq!(*asked.last().unwrap(), OWN_SERVED, "{proto:?}");
        // The parent's session is not the child's.
        assert!(sb.child_stream_requests(&parent).is_empty());
        sb.stop().await;
    }
}

#[tokio::test]
async fn the_child_route_knob_serves_one_route_and_refuses_the_other() {
    for proto in [MissionProtocol::EveB, MissionProtocol::Eve27] {
        // Only the child's own stream.
        let sb = sandbox(proto, json!({"childRoute": "own"})).await;
        let (parent, child, call, stream_path) = delegating(&sb).await;
        let via_parent = format!("/eve/v1/session/{parent}/subagents/{call}/{child}/stream");
        let (status, body) = get(&sb, &via_parent).await;
        assert_eq!(status, 404, "{proto:?}");
        assert_eq!(body[0]["error"], "Subagent stream not found.");
        read_child(&sb, &stream_path).await;
        let asked = sb.child_stream_requests(&child);
        assert_eq!(
            asked[0],
            ChildStreamRequest {
                via_parent: true,
                served: false
            }
        );
        assert_eq!(*asked.last().unwrap(), OWN_SERVED);
        sb.stop().await;

        // Only the parent's route, which the record names as the child's stream.
        let sb = sandbox(proto, json!({"childRoute": "parent"})).await;
        let (parent, child, call, stream_path) = delegating(&sb).await;
        let via_parent = format!("/eve/v1/session/{parent}/subagents/{call}/{child}/stream");
        assert_eq!(stream_path, via_parent, "{proto:?}");
        let (status, body) = get(&sb, &format!("/eve/v1/session/{child}/stream")).await;
        assert_eq!(status, 404, "{proto:?}");
        assert_eq!(body[0]["error"], "Session not found.");
        read_child(&sb, &via_parent).await;
        let asked = sb.child_stream_requests(&child);
        assert_eq!(
            asked[0],
            ChildStreamRequest {
                via_parent: false,
                served: false
            }
        );
        assert_eq!(*asked.last().unwrap(), PARENT_SERVED);
        sb.stop().await;
    }
}

#[tokio::test]
async fn the_parent_route_finds_only_its_own_child_by_its_call() {
    let sb = sandbox(MissionProtocol::EveB, json!({})).await;
    let (parent, child, call, _) = delegating(&sb).await;
    let other = common::create(&sb, json!({})).await;
    for path in [
        format!("/eve/v1/session/{parent}/subagents/call_nope/{child}/stream"),
        format!("/eve/v1/session/{other}/subagents/{call}/{child}/stream"),
        format!("/eve/v1/session/{parent}/subagents/{call}/ses_nope/stream"),
    ] {
        let (status, body) = get(&sb, &path).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(body[0]["error"], "Subagent stream not found.", "{path}");
    }
    assert!(sb.child_stream_requests(&child).is_empty());
    // The key is checked as on every route.
    let resp = client()
        .get(format!(
            "{}/eve/v1/session/{parent}/subagents/{call}/{child}/stream",
            sb.base_url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let (status, body) = set_faults_status(&sb, json!({"childRoute": "sideways"})).await;
    assert_eq!(status, 400, "{body}");
    sb.stop().await;
}

async fn set_faults_status(sb: &RunningSandbox, body: Value) -> (u16, Value) {
    let resp = post_json(sb, "/_sandbox/faults", &body).await;
    (
        resp.status().as_u16(),
        resp.json().await.unwrap_or_default(),
    )
}

#[tokio::test]
async fn a_restarted_sandbox_serves_the_child_it_had_started_finished() {
    let dir = tempfile::tempdir().unwrap();
    let kept = || async {
        let sb = start(SandboxConfig {
            mission_protocol: MissionProtocol::Eve27,
            data_dir: Some(dir.path().to_path_buf()),
            ..common::config()
        })
        .await
        .expect("sandbox starts");
        assert_eq!(
            set_faults(&sb, json!({"leaseSeconds": 1, "delegate": true})).await,
            200
        );
        sb
    };
    let sb = kept().await;
    let (parent, child, call, _) = delegating(&sb).await;
    let before = read_child(&sb, &format!("/eve/v1/session/{child}/stream")).await;
    sb.stop().await;

    let sb = kept().await;
    let via_parent = format!("/eve/v1/session/{parent}/subagents/{call}/{child}/stream");
    let after = read_child(&sb, &via_parent).await;
    let (task, sources, _, ended) = child_says(MissionProtocol::Eve27, &after);
    // The same child, replayed from its seed: the same task and the same sources.
    let (was_task, was_sources, _, _) = child_says(MissionProtocol::Eve27, &before);
    assert_eq!((task, &sources), (was_task, &was_sources));
    assert!(!sources.is_empty() && ended);
    sb.stop().await;
}
