//! The CLI against eve itself. Each test body runs against a real eve 1.0.1 server
//! (`tests/eve-agent`, its scripted model picking what to do from words in the
//! objective), against the older real releases that have the scenario (0.80.1 and
//! 0.64.1, generation B; 0.30.8, generation A; `tests/eve-agent-<version>`), each judged
//! by its own rules, and against the sandbox's eve 27, whose knobs stand in for those
//! words. What the sandbox makes up, the real servers would catch: they are the judges.

mod common;

use casebook_sandbox::{MissionProtocol, Pace, RunningSandbox, SandboxConfig};
use casebook_testsupport::real_eve::{self, RealEve};
use common::{Cli, ok};
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

/// What a mission is asked to do: the word the real agent acts on, the knob the sandbox
/// needs for the same.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scenario {
    Report,
    Question,
    Approval,
    Delegate,
    /// A turn that runs for a while, to be cancelled.
    Slow,
    /// A turn of a few seconds, to be replied to while it runs.
    Brief,
    /// A model failure eve does not retry: the session ends.
    Fail,
}

enum Eve {
    Real(RealEve),
    Sandbox(RunningSandbox),
}

struct Server {
    eve: Eve,
    cli: Cli,
}

impl Server {
    async fn real(version: &'static str) -> Self {
        let eve = tokio::task::spawn_blocking(move || RealEve::start_version(version))
            .await
            .unwrap();
        let cli = Cli {
            url: eve.base_url().to_owned(),
            key: eve.key().to_owned(),
        };
        Server {
            eve: Eve::Real(eve),
            cli,
        }
    }

    async fn sandbox(scenario: Scenario) -> Self {
        let (pace, events) = match scenario {
            Scenario::Slow => (100, 600),
            Scenario::Brief => (100, 80),
            _ => (0, 120),
        };
        let sb = casebook_sandbox::start(SandboxConfig {
            pace: Pace::Instant,
            mission_pace_ms: Some(pace),
            mission_events: Some(events),
            mission_protocol: MissionProtocol::Eve27,
            ..Default::default()
        })
        .await
        .unwrap();
        sb.knobs().set(|k| match scenario {
            Scenario::Approval => k.approval = true,
            Scenario::Delegate => k.delegate = true,
            Scenario::Fail => k.model_failure = true,
            // As the real servers do with a message sent during a turn's one long step.
            Scenario::Brief => k.queue_replies = true,
            _ => {}
        });
        Server {
            cli: Cli::new(&sb),
            eve: Eve::Sandbox(sb),
        }
    }

    /// The real eve of today, the older real releases whose test agents have the
    /// scenario, then the sandbox, each set up for `scenario`.
    async fn each(scenario: Scenario) -> Vec<Server> {
        let mut all = vec![Self::real(real_eve::CURRENT).await];
        // The older agents have no scripted failure.
        if scenario != Scenario::Fail {
            for v in real_eve::OLDER {
                all.push(Self::real(v).await);
            }
        }
        all.push(Self::sandbox(scenario).await);
        all
    }

    /// The real release this is, if it is one.
    fn version(&self) -> Option<&str> {
        match &self.eve {
            Eve::Real(eve) => Some(eve.version()),
            Eve::Sandbox(_) => None,
        }
    }

    /// Today's eve, whose scripted model says what it was told in a known way.
    fn is_current(&self) -> bool {
        self.version() == Some(real_eve::CURRENT)
    }

    fn name(&self) -> String {
        match &self.eve {
            Eve::Real(eve) => format!("eve {}", eve.version()),
            Eve::Sandbox(_) => "the sandbox's eve 27".into(),
        }
    }

    /// An objective both servers read as `scenario`: the real agent by its word, the
    /// sandbox by its knob (and "ambiguous", its word for a question).
    fn objective(&self, scenario: Scenario) -> String {
        let word = match scenario {
            Scenario::Report => "",
            Scenario::Question => " An ambiguous question.",
            Scenario::Approval => " Publish a note: approval.",
            Scenario::Delegate => " delegate",
            Scenario::Slow => " slow 40",
            Scenario::Brief => " slow 6",
            Scenario::Fail => " fail",
        };
        format!("Does urban heat raise hospital admissions?{word}")
    }

    async fn run(&self, args: &[&str], data: &Path) -> Output {
        self.cli.run(args, data).await
    }

    async fn show(&self, sid: &str, data: &Path) -> Value {
        serde_json::from_str(&ok(&self
            .run(&["mission", "show", sid, "--json"], data)
            .await))
        .unwrap()
    }

    /// `mission answer SID --request REQUEST <how> <value> --follow` (`how`: `--option` or
    /// `--text`), which must succeed.
    async fn answer(&self, sid: &str, request: &str, how: &str, value: &str, data: &Path) {
        let args = [
            "mission",
            "answer",
            sid,
            "--request",
            request,
            how,
            value,
            "--follow",
        ];
        ok(&self.run(&args, data).await);
    }

    /// `mission start --follow --json` for `scenario`: the session id.
    async fn start(&self, scenario: Scenario, data: &Path) -> String {
        self.cli
            .start_following(&self.objective(scenario), data)
            .await
            .1
    }

    /// `mission start --json` for `scenario`, not followed: the session id.
    async fn start_unfollowed(&self, scenario: Scenario, data: &Path) -> String {
        let objective = self.objective(scenario);
        let args = ["mission", "start", "--objective", &objective, "--json"];
        let started = ok(&self.run(&args, data).await);
        let first: Value = serde_json::from_str(started.lines().next().unwrap()).unwrap();
        first["sessionId"].as_str().unwrap().to_owned()
    }

    fn log(&self) -> String {
        match &self.eve {
            Eve::Real(eve) => eve.log_tail(),
            Eve::Sandbox(_) => String::new(),
        }
    }
}

fn items(show: &Value) -> &Vec<Value> {
    show["items"].as_array().unwrap()
}

/// The text of the last thing the agent said.
fn last_reply(show: &Value) -> String {
    let messages = show["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "assistant", "{show}");
    last["text"].as_str().unwrap().to_owned()
}

fn no_step_running(show: &Value, who: &str) {
    for item in items(show) {
        assert_ne!(
            item["step"]["status"], "running",
            "{who}: a step stays open after its turn settled: {item}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mission_is_followed_to_its_report_with_its_sources() {
    for s in Server::each(Scenario::Report).await {
        let who = s.name();
        let here = tempfile::tempdir().unwrap();
        let sid = s.start(Scenario::Report, here.path()).await;
        let show = s.show(&sid, here.path()).await;
        assert_eq!(show["status"], "waiting", "{who}: {show}\n{}", s.log());
        assert!(!last_reply(&show).is_empty(), "{who}");
        let sources = show["sources"].as_array().unwrap();
        assert!(!sources.is_empty(), "{who}: {show}");
        assert!(
            sources
                .iter()
                .all(|x| x["url"].as_str().unwrap().starts_with("https://")),
            "{who}: {show}"
        );
        no_step_running(&show, &who);
        assert_eq!(show["pending"], json!([]), "{who}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_is_answered_by_a_click_on_an_option_and_by_typing() {
    for s in Server::each(Scenario::Question).await {
        for by_text in [false, true] {
            let who = format!("{} by text {by_text}", s.name());
            let here = tempfile::tempdir().unwrap();
            let sid = s.start(Scenario::Question, here.path()).await;
            let asked = s.show(&sid, here.path()).await;
            assert_eq!(asked["status"], "needs_input", "{who}: {asked}");
            let q = &asked["pending"][0];
            assert_eq!(q["kind"], "question", "{who}");
            let request = q["requestId"].as_str().unwrap();
            let option = q["options"][0]["id"].as_str().unwrap();
            let text = "Only the last five years, in Europe";
            if by_text {
                assert_eq!(q["allowFreeform"], true, "{who}: {q}");
                s.answer(&sid, request, "--text", text, here.path()).await;
            } else {
                // The options as the server lists them: eve 1.x's ids are their labels.
                s.answer(&sid, request, "--option", option, here.path())
                    .await;
            }
            let after = s.show(&sid, here.path()).await;
            assert_eq!(after["status"], "waiting", "{who}: {after}\n{}", s.log());
            assert_eq!(after["pending"], json!([]), "{who}: {after}");
            let item = items(&after)
                .iter()
                .find(|i| i["request"]["requestId"] == request)
                .unwrap();
            let words = item["request"]["outcomeText"].as_str().unwrap();
            assert!(words.starts_with("Answered"), "{who}: {item}");
            let answer = if by_text { text } else { option };
            if s.is_current() {
                // The scripted model quotes what it was told.
                assert!(last_reply(&after).contains(answer), "{who}: {after}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_is_approved_and_another_denied() {
    for s in Server::each(Scenario::Approval).await {
        for approve in [true, false] {
            let who = format!("{} approve {approve}", s.name());
            let here = tempfile::tempdir().unwrap();
            if let Eve::Sandbox(sb) = &s.eve {
                sb.knobs().set(|k| k.approval = true);
            }
            let sid = s.start(Scenario::Approval, here.path()).await;
            let asked = s.show(&sid, here.path()).await;
            assert_eq!(asked["status"], "needs_input", "{who}: {asked}");
            let a = &asked["pending"][0];
            assert!(
                a["kind"].as_str().unwrap().ends_with("approval"),
                "{who}: {a}"
            );
            // Each release's own options (eve 1.x and 0.30.8: approve and deny; B: approve
            // and cancel), drawn as eve's client draws them when the server names no style.
            let ids: Vec<&str> = (a["options"].as_array().unwrap().iter())
                .map(|o| o["id"].as_str().unwrap())
                .collect();
            let no = match s.version() {
                Some("0.80.1" | "0.64.1") => "cancel",
                _ => "deny",
            };
            assert_eq!(ids, ["approve", no], "{who}: {a}");
            let styles: Vec<&Value> = (a["options"].as_array().unwrap().iter())
                .map(|o| &o["style"])
                .collect();
            assert_eq!(styles, [&json!("primary"), &json!("danger")], "{who}: {a}");
            let request = a["requestId"].as_str().unwrap();
            let option = if approve { "approve" } else { no };
            s.answer(&sid, request, "--option", option, here.path())
                .await;
            let after = s.show(&sid, here.path()).await;
            assert_eq!(after["status"], "waiting", "{who}: {after}\n{}", s.log());
            assert_eq!(after["pending"], json!([]), "{who}");
            let item = items(&after)
                .iter()
                .find(|i| i["request"]["requestId"] == request)
                .unwrap();
            // eve 0.30.8 says nothing of an answer: its next turn is how it was answered.
            let words = match (s.version(), approve) {
                (Some("0.30.8"), _) => "Answered",
                (_, true) => "Approved",
                (_, false) => "Declined",
            };
            assert_eq!(item["request"]["outcomeText"], words, "{who}: {item}");
            no_step_running(&after, &who);
            if s.is_current() {
                let reply = last_reply(&after);
                assert_eq!(reply.contains("not published"), !approve, "{who}: {reply}");
            }
        }
    }
}

/// An answer eve takes (202) and then refuses on the stream (an option the approval did
/// not offer) is said plainly, never shown as approved; the approval stays open and the
/// next answer is taken. (eve before 1.0 refuses such an answer at once with a 400.)
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_refused_on_the_stream_is_said_plainly_and_the_approval_stays_open() {
    let servers = vec![
        Server::real(real_eve::CURRENT).await,
        Server::sandbox(Scenario::Approval).await,
    ];
    for s in servers {
        let who = s.name();
        let here = tempfile::tempdir().unwrap();
        let sid = s.start(Scenario::Approval, here.path()).await;
        let asked = s.show(&sid, here.path()).await;
        let request = asked["pending"][0]["requestId"]
            .as_str()
            .unwrap()
            .to_owned();
        s.answer(&sid, &request, "--option", "maybe", here.path())
            .await;
        let after = s.show(&sid, here.path()).await;
        assert_eq!(
            after["status"],
            "needs_input",
            "{who}: {after}\n{}",
            s.log()
        );
        let pending = &after["pending"][0];
        assert_eq!(pending["requestId"], request.as_str(), "{who}: {after}");
        let refusal = pending["refusal"].as_str().unwrap_or_default();
        assert!(
            refusal.starts_with("The service refused your answer: "),
            "{who}: {pending}"
        );
        assert!(
            pending.get("outcome").is_none(),
            "{who}: not approved: {pending}"
        );
        let text = ok(&s.run(&["mission", "show", &sid], here.path()).await);
        assert!(text.contains(refusal), "{who}: {text}");
        // Answered again with an option it offers: taken, and the turn goes on.
        s.answer(&sid, &request, "--option", "approve", here.path())
            .await;
        let done = s.show(&sid, here.path()).await;
        assert_eq!(done["status"], "waiting", "{who}: {done}");
        let item = items(&done)
            .iter()
            .find(|i| i["request"]["requestId"] == request.as_str())
            .unwrap();
        assert_eq!(item["request"]["outcomeText"], "Approved", "{who}: {item}");
        assert!(item["request"].get("refusal").is_none(), "{who}: {item}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_delegated_mission_closes_its_agent_task_and_opens_its_sub_agent() {
    for s in Server::each(Scenario::Delegate).await {
        let who = s.name();
        let here = tempfile::tempdir().unwrap();
        let sid = s.start(Scenario::Delegate, here.path()).await;
        let show = s.show(&sid, here.path()).await;
        assert_eq!(show["status"], "waiting", "{who}: {show}\n{}", s.log());
        no_step_running(&show, &who);
        assert!(!last_reply(&show).is_empty(), "{who}");
        let agent = ok(&s
            .run(
                &["mission", "show", &sid, "--agent", "researcher", "--json"],
                here.path(),
            )
            .await);
        let agent: Value = serde_json::from_str(&agent).unwrap();
        let said = agent.to_string();
        assert!(said.contains("https://"), "{who}: its sources: {agent}");
    }
}

/// `mission watch --json` in a child process, its lines handed over as they come.
fn watch(
    s: &Server,
    sid: &str,
    data: &Path,
) -> (std::process::Child, std::sync::mpsc::Receiver<Value>) {
    let mut child = common::casebook(
        &["mission", "watch", sid, "--json"],
        &s.cli.url,
        &s.cli.key,
        data,
    )
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && tx.send(v).is_err()
            {
                break;
            }
        }
    });
    (child, rx)
}

/// The next record the watch prints that `pred` accepts (a liveness bound, not a
/// timing claim: a watch that hangs fails here instead of hanging the suite).
fn until(rx: &std::sync::mpsc::Receiver<Value>, who: &str, pred: impl Fn(&Value) -> bool) -> Value {
    loop {
        match rx.recv_timeout(Duration::from_secs(180)) {
            Ok(v) if pred(&v) => return v,
            Ok(_) => {}
            Err(e) => panic!("{who}: the watch ended or stalled ({e})"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_ends_the_running_turn_and_the_session_waits_for_a_message() {
    for s in Server::each(Scenario::Slow).await {
        let who = s.name();
        let here = tempfile::tempdir().unwrap();
        let sid = s.start_unfollowed(Scenario::Slow, here.path()).await;
        let (mut child, rx) = watch(&s, &sid, here.path());
        // Into the reply's streaming, so there is something to cut off.
        until(&rx, &who, |v| {
            v["event"] == "content.delta" || v["event"] == "message.appended"
        });
        // eve 1.x emits deltas as `content.delta`, before as `message.appended`.
        let cancelled = ok(&s.run(&["mission", "cancel", &sid], here.path()).await);
        assert!(cancelled.contains("accepted"), "{who}: {cancelled}");
        // eve 1.x: `turn.settled` cancelled; before: `turn.cancelled`.
        until(&rx, &who, |v| {
            v["event"] == "turn.cancelled"
                || (v["event"] == "turn.settled" && v["data"]["outcome"] == "cancelled")
        });
        let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
            .await
            .unwrap();
        assert!(
            status.success(),
            "{who}: the watch ends at the cancelled turn"
        );
        let show = s.show(&sid, here.path()).await;
        assert_eq!(show["status"], "cancelled", "{who}: {show}");
        no_step_running(&show, &who);
        // What the cancel cut off (eve: `interrupted`) is an aside, not the reply: no
        // report comes of it.
        for m in show["messages"].as_array().unwrap() {
            if m["role"] == "assistant" {
                assert_eq!(m["narration"], true, "{who}: {m}");
            }
        }
        let report = s
            .run(
                &["mission", "export", &sid, "--format", "report"],
                here.path(),
            )
            .await;
        assert!(!report.status.success(), "{who}: {report:?}");
        // The session goes on waiting for a message: a reply is taken and answered.
        ok(&s
            .run(
                &[
                    "mission",
                    "reply",
                    &sid,
                    "--message",
                    "Just the summary, please.",
                    "--follow",
                ],
                here.path(),
            )
            .await);
        let after = s.show(&sid, here.path()).await;
        assert_eq!(after["status"], "waiting", "{who}: {after}\n{}", s.log());
        assert!(!last_reply(&after).is_empty(), "{who}");
    }
}

/// A reply sent while a turn streams: eve 1.x and B queue it for the next turn (as the
/// sandbox does with `queueReplies`; without, it steers the running turn), and `reply
/// --follow` follows it to the end of the turn that took it, never only to the running
/// turn's end.
#[tokio::test(flavor = "multi_thread")]
async fn a_reply_sent_while_a_turn_runs_is_followed_to_the_turn_that_takes_it() {
    let said = "And in Europe?";
    let steering = Server::sandbox(Scenario::Brief).await;
    if let Eve::Sandbox(sb) = &steering.eve {
        sb.knobs().set(|k| k.queue_replies = false);
    }
    let mut all = Server::each(Scenario::Brief).await;
    all.push(steering);
    for (n, s) in all.into_iter().enumerate() {
        let who = format!("{} ({n})", s.name());
        let here = tempfile::tempdir().unwrap();
        let sid = s.start_unfollowed(Scenario::Brief, here.path()).await;
        let (mut child, rx) = watch(&s, &sid, here.path());
        until(&rx, &who, |v| {
            v["event"] == "content.delta" || v["event"] == "message.appended"
        });
        // One follower at a time: the reply's own follows on from the stored cursor.
        child.kill().unwrap();
        child.wait().unwrap();
        let args = ["mission", "reply", &sid, "--message", said, "--follow"];
        ok(&s.run(&args, here.path()).await);
        let show = s.show(&sid, here.path()).await;
        assert_eq!(show["status"], "waiting", "{who}: {show}\n{}", s.log());
        no_step_running(&show, &who);
        let messages = show["messages"].as_array().unwrap();
        let at = messages
            .iter()
            .position(|m| m["role"] == "user" && m["text"] == said)
            .unwrap_or_else(|| panic!("{who}: the reply is not in the conversation: {show}"));
        assert!(
            messages[at + 1..].iter().any(|m| m["role"] == "assistant"),
            "{who}: the turn that took the reply was not followed to its end: {show}"
        );
        if s.version().is_some() {
            // Queued: the next turn answers it, in the scripted model's words.
            let reply = last_reply(&show);
            assert!(
                reply.contains(&format!("You said: {said}")),
                "{who}: {reply}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_eve_ended_reads_as_failed_and_a_reply_to_it_is_refused_plainly() {
    for s in Server::each(Scenario::Fail).await {
        let who = s.name();
        let here = tempfile::tempdir().unwrap();
        let out = s
            .run(
                &[
                    "mission",
                    "start",
                    "--objective",
                    &s.objective(Scenario::Fail),
                    "--follow",
                ],
                here.path(),
            )
            .await;
        let list: Value = serde_json::from_str(&ok(&s
            .run(&["mission", "list", "--json"], here.path())
            .await))
        .unwrap();
        let sid = list[0]["sessionId"].as_str().unwrap().to_owned();
        let show = s.show(&sid, here.path()).await;
        assert_eq!(
            show["status"],
            "failed",
            "{who}: {show}\n{out:?}\n{}",
            s.log()
        );
        if let Eve::Real(eve) = &s.eve {
            // eve writes `session.ended` a moment before it stops taking messages, and
            // deletes the history once it has: its 410 says the session is wholly over.
            gone(eve, &sid).await;
        }
        let reply = s
            .run(
                &["mission", "reply", &sid, "--message", "Try again?"],
                here.path(),
            )
            .await;
        assert!(!reply.status.success(), "{who}");
        let said = String::from_utf8_lossy(&reply.stderr);
        assert!(said.contains("has ended"), "{who}: {said}");
    }
}

/// Until the real server answers the session's stream with `410 session_expired`.
async fn gone(eve: &RealEve, sid: &str) {
    let url = format!("{}/eve/v1/session/{sid}/stream", eve.base_url());
    for _ in 0..600 {
        let resp = reqwest::Client::new()
            .get(&url)
            .bearer_auth(eve.key())
            .timeout(Duration::from_secs(5))
            .send()
            .await;
        if resp.is_ok_and(|r| r.status() == 410) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "eve {}: the ended session's history was never deleted",
        eve.version()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_key_is_refused_in_plain_words() {
    for s in Server::each(Scenario::Report).await {
        let who = s.name();
        let here = tempfile::tempdir().unwrap();
        let wrong = Cli {
            url: s.cli.url.clone(),
            key: "not-the-key".into(),
        };
        let out = wrong
            .run(
                &["mission", "start", "--objective", "Does shade help?"],
                here.path(),
            )
            .await;
        assert!(!out.status.success(), "{who}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("did not accept the API key"), "{who}: {said}");
        assert!(
            !said.contains("not-the-key"),
            "{who}: the key is never said"
        );
    }
}
