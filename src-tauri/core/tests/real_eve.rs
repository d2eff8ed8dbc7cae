//! Core's investigation client against eve itself: each test body runs against a real eve
//! 1.0.1 server, the older real releases (0.80.1 and 0.64.1, generation B; 0.30.8,
//! generation A) and the sandbox's eve 27, whose knobs stand in for the words the real
//! test agent (`tests/eve-agent*`) acts on. No front end: the client, its watch and the
//! conversation read from what the watch saw.

use casebook_core::keys::ApiKey;
use casebook_core::missions::client::MissionSpec;
use casebook_core::missions::client::{Dialect, FollowUp, InputResponse, InvestigationClient};
use casebook_core::missions::conversation::Conversation;
use casebook_core::missions::protocol::{self, Fact, MissionEvent, TurnEnd, TurnTracker};
use casebook_core::missions::store::MissionStatus;
use casebook_core::missions::stream::{Awaited, Reply, WatchEnd, WatchOptions, WatchUpdate};
use casebook_core::net::connection::Connection;
use casebook_sandbox::{MissionProtocol, Pace, RunningSandbox, SandboxConfig};
use casebook_testsupport::real_eve::{self, RealEve};
use std::time::Duration;

/// What a mission is asked to do: the word the real agent acts on, or the sandbox's knob.
#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    Report,
    Question,
    /// A single long step, to be cancelled or replied to while it streams.
    Slow,
}

enum Eve {
    Real(RealEve),
    Sandbox(RunningSandbox),
}

struct Server {
    eve: Eve,
    client: InvestigationClient,
}

impl Server {
    async fn each(scenario: Scenario) -> Vec<Server> {
        let mut all = Vec::new();
        for v in std::iter::once(real_eve::CURRENT).chain(real_eve::OLDER.iter().copied()) {
            let eve = tokio::task::spawn_blocking(move || RealEve::start_version(v))
                .await
                .unwrap();
            let client = client(eve.base_url(), eve.key());
            all.push(Server {
                eve: Eve::Real(eve),
                client,
            });
        }
        let slow = scenario == Scenario::Slow;
        let sb = casebook_sandbox::start(SandboxConfig {
            pace: Pace::Instant,
            mission_pace_ms: Some(if slow { 100 } else { 0 }),
            mission_events: Some(if slow { 80 } else { 120 }),
            mission_protocol: MissionProtocol::Eve27,
            ..Default::default()
        })
        .await
        .unwrap();
        // As the real servers do with a message sent during a turn's one long step.
        sb.knobs().set(|k| k.queue_replies = true);
        let client = client(sb.base_url(), sb.key());
        all.push(Server {
            eve: Eve::Sandbox(sb),
            client,
        });
        all
    }

    fn name(&self) -> String {
        match &self.eve {
            Eve::Real(eve) => format!("eve {}", eve.version()),
            Eve::Sandbox(_) => "the sandbox's eve 27".into(),
        }
    }

    fn is_real(&self) -> bool {
        matches!(self.eve, Eve::Real(_))
    }

    /// A mission of `scenario` watched to its first turn's end: its id, the create
    /// answer's token, what the watch saw and how it ended.
    async fn first_turn(&self, scenario: Scenario) -> (String, Option<String>, Seen, WatchEnd) {
        let (sid, created) = self.start(scenario).await;
        let mut seen = Seen::default();
        let end = watch_on(self.watcher(), &sid, &mut seen, Awaited::default(), |_| {}).await;
        (sid, created, seen, end)
    }

    /// The client, and who to name should a watch fail.
    fn watcher(&self) -> (&InvestigationClient, &dyn Said) {
        (&self.client, self)
    }

    fn log(&self) -> String {
        match &self.eve {
            Eve::Real(eve) => eve.log_tail(),
            Eve::Sandbox(sb) => format!("(the sandbox at {})", sb.base_url()),
        }
    }

    async fn start(&self, scenario: Scenario) -> (String, Option<String>) {
        let word = match scenario {
            Scenario::Report => "",
            Scenario::Question => " An ambiguous question.",
            Scenario::Slow => " slow 6",
        };
        let spec = MissionSpec::new(format!("How do honey bees navigate?{word}"), 2500);
        let created = self.client.create_session(&spec).await.unwrap();
        (created.session_id, created.continuation_token)
    }
}

/// What a failed watch says of its server.
trait Said: Sync {
    fn said(&self) -> String;
}

impl Said for Server {
    fn said(&self) -> String {
        format!("{}: {}", self.name(), self.log())
    }
}

impl Said for String {
    fn said(&self) -> String {
        self.clone()
    }
}

fn client(base: &str, key: &str) -> InvestigationClient {
    InvestigationClient::new(Connection::new(base).unwrap(), ApiKey::parse(key).unwrap())
}

/// What the watches of one mission saw, and where the next resumes.
#[derive(Default)]
struct Seen {
    events: Vec<MissionEvent>,
    cursor: Option<u64>,
    last_id: Option<String>,
    stream_version: Option<u32>,
}

impl Seen {
    fn options(&self, awaited: Awaited) -> WatchOptions {
        let mut turns = TurnTracker::default();
        for e in &self.events {
            turns.observe_all(&protocol::read(e));
        }
        WatchOptions {
            start_index: self.cursor,
            last_event_id: self.last_id.clone(),
            just_created: self.events.is_empty(),
            initial_backoff: Duration::from_millis(50),
            turns,
            awaited,
            ..Default::default()
        }
    }

    fn conversation(&self) -> Conversation {
        Conversation::from_events(&self.events)
    }

    fn status(&self) -> MissionStatus {
        (self.events.iter()).fold(MissionStatus::Running, |s, e| s.after(&protocol::read(e)))
    }

    /// The newest continuation token, for a session whose create answer gave one (eve's
    /// token generation); later ones name their id where a token was, and refuse it back.
    fn token(&self, created: &Option<String>) -> Option<String> {
        created.as_ref()?;
        let newest = self.events.iter().rev().find_map(|e| {
            protocol::read(e).into_iter().find_map(|f| match f {
                Fact::Waiting {
                    continuation_token: Some(t),
                } => Some(t),
                _ => None,
            })
        });
        newest.or_else(|| created.clone())
    }
}

/// Watches on from where `seen` stopped, to the next end of a turn; `until` sees each new
/// event (a cancel or a reply sent mid-turn).
async fn watch_on(
    (client, who): (&InvestigationClient, &dyn Said),
    sid: &str,
    seen: &mut Seen,
    awaited: Awaited,
    mut until: impl FnMut(&MissionEvent) + Send,
) -> WatchEnd {
    let options = seen.options(awaited);
    let end = client
        .watch(sid, options, |u| match u {
            WatchUpdate::Event { event } => {
                until(&event);
                seen.events.push(event);
            }
            WatchUpdate::Position { next } => seen.cursor = Some(next),
            WatchUpdate::Connected { stream_version, .. } => {
                seen.stream_version = stream_version.or(seen.stream_version);
            }
            WatchUpdate::Reconnecting { .. } => {}
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", who.said()));
    seen.last_id = end.last_event_id.clone();
    end
}

/// What a watch saw, for a failure's message: each record's kind, deltas counted.
fn kinds(seen: &Seen) -> String {
    let mut out: Vec<String> = Vec::new();
    for e in &seen.events {
        match out.last_mut() {
            Some(last) if is_delta(e) && last.starts_with(&e.event) => last.push('+'),
            _ => out.push(e.event.clone()),
        }
    }
    out.join(" ")
}

/// The reply is streaming.
fn is_delta(e: &MissionEvent) -> bool {
    matches!(e.event.as_str(), "content.delta" | "message.appended")
}

/// How the watch's last record ended the turn, read with the records before it (eve 0.64
/// ends a question's turn with a plain `session.waiting`: the open question makes it the
/// person's).
fn turn_end(seen: &Seen, end: &WatchEnd) -> Option<TurnEnd> {
    end.terminal()?;
    let mut turns = TurnTracker::default();
    (seen.events.iter()).fold(None, |last, e| {
        turns.observe_all(&protocol::read(e)).or(last)
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mission_is_watched_to_its_waiting_turn_end_and_reads_as_a_report_with_sources() {
    for s in Server::each(Scenario::Report).await {
        let who = s.name();
        let (_, _, seen, end) = s.first_turn(Scenario::Report).await;
        assert_eq!(turn_end(&seen, &end), Some(TurnEnd::Waiting), "{who}");
        assert_eq!(seen.status(), MissionStatus::Waiting, "{who}");
        assert!(
            seen.stream_version.is_some(),
            "{who}: eve names its stream version"
        );
        let c = seen.conversation();
        assert!(c.report().is_some(), "{who}: no report");
        assert!(!c.sources.is_empty(), "{who}: no sources");
        assert!(
            c.sources.iter().all(|x| x.url.starts_with("https://")),
            "{who}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_in_each_releases_form_resumes_the_mission_to_its_end() {
    for s in Server::each(Scenario::Question).await {
        let who = s.name();
        let (sid, created, mut seen, end) = s.first_turn(Scenario::Question).await;
        assert_eq!(turn_end(&seen, &end), Some(TurnEnd::NeedsInput), "{who}");
        let pending = seen.conversation().pending();
        let q = pending
            .first()
            .unwrap_or_else(|| panic!("{who}: nothing asked"));
        let answer = InputResponse {
            request_id: q.request_id.clone(),
            option_id: Some(q.options[1].id.clone()),
            text: None,
        };
        let dialect = Dialect::of_stream(seen.stream_version);
        let token = seen.token(&created);
        s.client
            .follow_up(
                &sid,
                &FollowUp::Answers(vec![answer]),
                token.as_deref(),
                dialect,
            )
            .await
            .unwrap_or_else(|e| panic!("{who}: {e:?}\n{}", s.log()));
        let end = watch_on(s.watcher(), &sid, &mut seen, Awaited::default(), |_| {}).await;
        assert_eq!(
            turn_end(&seen, &end),
            Some(TurnEnd::Waiting),
            "{who}: {end:?} after {}",
            kinds(&seen)
        );
        assert!(seen.conversation().pending().is_empty(), "{who}");
        assert_eq!(seen.status(), MissionStatus::Waiting, "{who}");
    }
}

/// A cancel while the reply streams: any 2xx is the acknowledgement, the stream says the
/// turn ended (27's `turn.settled` cancelled, before `turn.cancelled`), and the mission
/// reads as cancelled with nothing of the cut-off text as a reply.
#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_is_acknowledged_and_the_stream_ends_the_turn_cancelled() {
    for s in Server::each(Scenario::Slow).await {
        let who = s.name();
        let (sid, _) = s.start(Scenario::Slow).await;
        let mut seen = Seen::default();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let mut tx = Some(tx);
        let cancel = {
            let client = s.client.clone();
            let sid = sid.clone();
            tokio::spawn(async move {
                rx.await.unwrap();
                client.cancel(&sid, None).await
            })
        };
        let end = watch_on(s.watcher(), &sid, &mut seen, Awaited::default(), |e| {
            if let Some(tx) = tx.take_if(|_| is_delta(e)) {
                let _ = tx.send(());
            }
        })
        .await;
        let ack = cancel
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("{who}: {e:?}"));
        assert!(!ack.nothing_to_cancel, "{who}: {ack:?}");
        assert!(turn_end(&seen, &end).is_some(), "{who}");
        assert_eq!(seen.status(), MissionStatus::Cancelled, "{who}");
        assert!(
            seen.conversation().report().is_none(),
            "{who}: cut-off text is no reply"
        );
    }
}

/// A reply sent while a turn streams is awaited by the watch already running: it goes on
/// past that turn's end to the end of the turn that took the reply.
#[tokio::test(flavor = "multi_thread")]
async fn a_watch_awaiting_a_reply_goes_on_past_the_running_turns_end() {
    let said = "And in Europe?";
    for s in Server::each(Scenario::Slow).await {
        let who = s.name();
        let (sid, created) = s.start(Scenario::Slow).await;
        let mut seen = Seen::default();
        let awaited = Awaited::default();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let mut tx = Some(tx);
        let reply = {
            let client = s.client.clone();
            let sid = sid.clone();
            let awaited = awaited.clone();
            tokio::spawn(async move {
                let (version, token): (Option<u32>, Option<String>) = rx.await.unwrap();
                let sent = client
                    .follow_up(
                        &sid,
                        &FollowUp::Message(said.into()),
                        token.as_deref(),
                        Dialect::of_stream(version),
                    )
                    .await
                    .unwrap();
                awaited.add(match sent.delivery_id {
                    Some(id) => Reply::Delivery(id),
                    None => Reply::Words(said.into()),
                });
            })
        };
        let end = {
            let created = created.clone();
            watch_on(s.watcher(), &sid, &mut seen, awaited.clone(), |e| {
                if let Some(tx) = tx.take_if(|_| is_delta(e)) {
                    // eve 1.x streams `content.delta`; before, `message.appended`.
                    let version = if e.event == "content.delta" { 27 } else { 26 };
                    let _ = tx.send((Some(version), created.clone()));
                }
            })
            .await
        };
        reply.await.unwrap();
        assert_eq!(turn_end(&seen, &end), Some(TurnEnd::Waiting), "{who}");
        let messages = seen.conversation().messages();
        let at = messages
            .iter()
            .position(|m| m.text == said)
            .unwrap_or_else(|| panic!("{who}: the reply's turn was not followed: {messages:?}"));
        assert!(
            messages[at + 1..]
                .iter()
                .any(|m| !m.narration && !m.text.is_empty()),
            "{who}: the turn that took it was not followed to its end: {messages:?}"
        );
        if s.is_real() {
            let last = &messages.last().unwrap().text;
            assert!(
                last.contains(&format!("You said: {said}")),
                "{who}: {last}\nended {:?} after {}",
                end.reason,
                kinds(&seen)
            );
        }
        assert!(!awaited.pending(), "{who}");
    }
}

/// The sandbox's eve 27 is a picture of eve 1.0.1 only while it writes what 1.0.1 writes:
/// the same kinds of record, scenario by scenario (a report and a reply, a question and an
/// approval answered, a delegation, a model failure), its knobs standing in for the real
/// agent's words. A kind one writes and the other does not fails here.
#[tokio::test(flavor = "multi_thread")]
async fn the_sandboxs_eve_27_writes_the_record_kinds_eve_1_0_1_writes() {
    let eve = tokio::task::spawn_blocking(|| RealEve::start_version(real_eve::CURRENT))
        .await
        .unwrap();
    let real = client(eve.base_url(), eve.key());
    let sb = casebook_testsupport::sandbox::missions(MissionProtocol::Eve27, 60).await;
    let sandbox = client(sb.base_url(), sb.key());
    let scenarios = [
        ("", "report"),
        (" An ambiguous question.", "question"),
        (" Publish a note: approval.", "approval"),
        (" delegate", "delegate"),
        (" fail", "fail"),
    ];
    for (words, name) in scenarios {
        sb.knobs().set(|k| {
            k.approval = name == "approval";
            k.delegate = name == "delegate";
            k.model_failure = name == "fail";
        });
        let mut kinds = Vec::new();
        for c in [&real, &sandbox] {
            kinds.push(kinds_of(c, words, name).await);
        }
        let only =
            |a: usize, b: usize| -> Vec<&String> { kinds[a].difference(&kinds[b]).collect() };
        assert!(
            only(0, 1).is_empty() && only(1, 0).is_empty(),
            "{name}: only eve 1.0.1 wrote {:?}; only the sandbox wrote {:?}",
            only(0, 1),
            only(1, 0)
        );
    }
}

/// Every kind of record one mission's stream holds: followed to its turn's end, its
/// question or approval answered with the first option, a report answered by a reply.
async fn kinds_of(
    c: &InvestigationClient,
    words: &str,
    name: &str,
) -> std::collections::BTreeSet<String> {
    let who = format!("{name}{words}");
    let s: (&InvestigationClient, &dyn Said) = (c, &who);
    let spec = MissionSpec::new(format!("How do honey bees navigate?{words}"), 2500);
    let sid = c.create_session(&spec).await.unwrap().session_id;
    let mut seen = Seen::default();
    let end = watch_on(s, &sid, &mut seen, Awaited::default(), |_| {}).await;
    let dialect = Dialect::of_stream(seen.stream_version);
    let next = match turn_end(&seen, &end) {
        Some(TurnEnd::NeedsInput) => {
            let q = seen.conversation().pending().remove(0);
            Some(FollowUp::Answers(vec![InputResponse {
                request_id: q.request_id,
                option_id: Some(q.options[0].id.clone()),
                text: None,
            }]))
        }
        Some(TurnEnd::Waiting) if name == "report" => {
            Some(FollowUp::Message("And in Europe?".into()))
        }
        _ => None,
    };
    if let Some(next) = next {
        c.follow_up(&sid, &next, None, dialect).await.unwrap();
        watch_on(s, &sid, &mut seen, Awaited::default(), |_| {}).await;
    }
    seen.events.into_iter().map(|e| e.event).collect()
}
