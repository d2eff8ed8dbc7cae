//! What a record says, in one vocabulary whatever the wire generation: the facts the
//! lifecycle fold, the conversation and the watch's end read. A record gives none, one or
//! several (a v26 `actions.requested` names every call it asks for).

pub use super::outcomes::{
    RequestOutcome, ResponseOutcome, SignInOutcome, TurnOutcome, WorkOutcome,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// One thing a record says happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Fact {
    // The turn and the session.
    TurnStarted,
    /// The turn ended: `completed`, `cancelled`, `failed`, or another of eve's outcomes.
    /// `session_waits`: the session now waits for the person with no record saying so
    /// (eve 27's `turn.settled`).
    TurnEnded {
        outcome: TurnOutcome,
        error: Option<String>,
        session_waits: bool,
        /// Not the end: the turn is held and goes on after the session's next wait
        /// (eve B's `turn.completed {held: true}`).
        held: bool,
    },
    /// The turn is held. `for_person`: `Some(true)` until the person acts (an answer, an
    /// approval, a sign-in); `Some(false)`: it goes on by itself once what it awaits is
    /// done (its own delegated calls, sub-agents and background tasks); `None`: the
    /// record does not say (eve before 0.70), and a question still open decides
    /// ([`super::turn::TurnTracker`]). `awaiting`: what it names.
    TurnHeld {
        for_person: Option<bool>,
        awaiting: Vec<Awaited>,
    },
    TurnResumed,
    /// The service took these messages into a turn (or settled them): eve 27's
    /// `delivery.consumed` and `delivery.settled`, a turn started by one, B's turn records
    /// whose `meta.deliveryIds` name them. A reply sent while a turn runs is followed until
    /// its delivery shows here.
    DeliveryTaken {
        ids: Vec<String>,
    },
    /// The session waits for the person's next message. eve before 0.31 hands the next
    /// follow-up's token here.
    Waiting {
        continuation_token: Option<String>,
    },
    /// The session is over.
    SessionEnded {
        failed: bool,
        error: Option<String>,
    },

    // What was said.
    /// `files`: what came with it, read from its parts ([`FileRef`]); a message that is
    /// only a file has an empty text.
    UserMessage {
        text: String,
        files: Vec<FileRef>,
    },
    /// A file the agent made (eve 27's `content.completed {kind: "file"}`).
    FileMade {
        file: FileRef,
    },
    /// Text streaming into the part `part` (a key unique within the mission). `kind`:
    /// only a part's first record may name it; `None` continues whatever the part is.
    Delta {
        part: String,
        kind: Option<PartKind>,
        text: DeltaText,
    },
    /// The part is finished. `whole`: its whole text, when the record carries it.
    /// `narration`: the assistant narrating work it goes on with, not replying.
    PartCompleted {
        part: String,
        kind: PartKind,
        whole: Option<String>,
        narration: bool,
    },

    // Work: tool calls, background tasks, sub-agents.
    CallRequested {
        call: String,
        name: String,
        input: Option<Value>,
    },
    /// A piece of a call's input as it streams.
    CallInput {
        call: String,
        delta: String,
    },
    /// `name`: the tool's name, for a call whose request was never seen.
    CallSettled {
        call: String,
        name: Option<String>,
        status: WorkOutcome,
        output: Option<Value>,
        error: Option<String>,
    },
    /// `call`: the call that started it (eve 1.x's `startedBy`, an agent task), whose
    /// end is the task's end too: eve sends no end of its own for such a task.
    /// `detached`: it runs on past its turn, and its result comes in a turn of its own
    /// (eve 0.64's background sub-agent, known by the receipt its call returned).
    TaskStarted {
        task: String,
        name: String,
        call: Option<String>,
        detached: bool,
    },
    TaskSettled {
        task: String,
        status: WorkOutcome,
        output: Option<Value>,
        error: Option<String>,
    },
    /// A background task's result, delivered to the session (eve B's
    /// `message.received {kind: "task.result", taskIds}`): not the person's message.
    /// `tasks`: the tasks it names; `text`: what it says, when it says something.
    TaskResult {
        tasks: Vec<String>,
        text: Option<String>,
    },
    /// A delegated agent. `ends_here`: its end comes in this stream; otherwise it is
    /// followed on its own stream, and is a finished step here.
    ChildStarted {
        key: String,
        name: String,
        ends_here: bool,
        /// The call that delegated to it, when the record names one.
        call: Option<String>,
        /// Its own session, and the path its stream is read at (B's `streamPath`, 27's
        /// `stream`: its own, or the parent's route for a remote child).
        session: Option<String>,
        stream: Option<String>,
    },
    ChildEnded {
        key: String,
        output: Option<Value>,
    },
    /// Money spent by one step or call, in dollars (finite, above zero).
    Spent {
        usd: f64,
    },
    StepFailed {
        message: Option<String>,
    },

    // What the session asks the person.
    RequestOpened(Request),
    /// `reason`: why, when eve says (`superseded-by-message`: the person's message
    /// withdrew it).
    RequestSettled {
        id: String,
        outcome: Option<RequestOutcome>,
        reason: Option<String>,
        response: Option<Value>,
    },
    /// An answer the service took (202) and now applies: eve 1.x's `response.submitted`,
    /// naming the interaction it answers.
    ResponseSubmitted {
        response: String,
        interaction: String,
    },
    /// What became of that answer: `applied`, or one of `refused`, `failed`, `withdrawn`,
    /// `abandoned`, `expired` (with eve's `reason`), after which the interaction is still
    /// the person's to answer.
    ResponseSettled {
        response: String,
        outcome: ResponseOutcome,
        reason: Option<String>,
    },
    /// A sign-in the mission waits for. `interaction`: the interaction that carries it, when
    /// there is one (eve 27), whose settling ends it.
    SignInOpened {
        sign_in: SignInPrompt,
        interaction: Option<String>,
    },
    /// A sign-in ended, by the service's name and attempt (eve up to 26). An attempt
    /// another replaced ends `failed` with a reason saying so ([`superseded`]).
    SignInSettled {
        name: String,
        attempt: Option<String>,
        outcome: Option<SignInOutcome>,
        reason: Option<String>,
    },

    // The seeds' own vocabulary.
    Plan {
        steps: Vec<String>,
    },
    Searched {
        query: String,
        engine: Option<String>,
    },
    SourceFound {
        url: String,
        title: Option<String>,
    },
    Evidence {
        quote: String,
        source_url: Option<String>,
    },
    FindingVerified {
        claim: String,
    },
    /// The service's own total spend so far, in dollars.
    SpendReported {
        usd: f64,
    },
    Report {
        title: Option<String>,
        summary: Option<String>,
        findings: Vec<String>,
    },
}

/// What a held turn waits on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Awaited {
    /// A question, approval or sign-in: the person acts.
    Interaction(String),
    /// One of its own calls (a sub-agent, a workflow tool).
    Call(String),
    /// One of its own background tasks.
    Task(String),
}

/// What a streaming part is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartKind {
    Text,
    Reasoning,
}

/// A delta's text: a piece to append, or everything so far.
#[derive(Debug, Clone, PartialEq)]
pub enum DeltaText {
    Append(String),
    SoFar(String),
    None,
}

/// A question, approval or budget prompt, as the session asks it.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id an answer names (eve 27: the interaction's id).
    pub id: String,
    /// `question`, `tool-approval`, `session-limit`, `approval`, `budget`, ... (open).
    pub kind: String,
    pub prompt: String,
    pub title: Option<String>,
    pub options: Vec<RequestOption>,
    pub allow_freeform: bool,
}

/// Files kept per message: more say nothing a person reads.
pub const MAX_FILES: usize = 20;

/// A file in a message, as the service described it: never its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct FileRef {
    /// Its name, made safe to show ([`super::json::file_ref`]): "file" when it has none.
    pub name: String,
    pub media_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub size: Option<u64>,
    /// Where to open it: kept only when it is http(s), so a `data:`, `javascript:`,
    /// `file:` or `blob:` address never becomes a link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
}

impl FileRef {
    /// One line a person reads: "notes.pdf (application/pdf, 12.3 KB) https://…".
    pub fn line(&self) -> String {
        let mut out = format!("{} ({}", self.name, self.media_type);
        if let Some(size) = self.size {
            out.push_str(", ");
            out.push_str(&readable_size(size));
        }
        out.push(')');
        if let Some(url) = &self.url {
            out.push(' ');
            out.push_str(url);
        }
        out
    }
}

/// A byte count as people read it: "900 B", "12.3 KB", "4.0 MB".
pub fn readable_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1000.0;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// An option the service listed for a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct RequestOption {
    pub id: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    /// How to draw it: `primary`, `danger` or `default` (eve's hint; open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub style: Option<String>,
}

/// A sign-in as the session asks for it.
#[derive(Debug, Clone, PartialEq)]
pub struct SignInPrompt {
    /// What to sign in to.
    pub name: String,
    pub description: Option<String>,
    pub url: Option<String>,
    pub user_code: Option<String>,
    pub expires_at: Option<String>,
    pub instructions: Option<String>,
    /// Which attempt (B's `attemptId`; 27: the interaction's id): a newer one replaces it.
    pub attempt: Option<String>,
}

/// Whether a request of `kind` asks to approve a call (eve 27's `approval`, B's
/// `tool-approval`), not a question.
pub fn is_approval_kind(kind: &str) -> bool {
    matches!(kind, "approval" | "tool-approval")
}

/// Whether a request's end says the person's own message withdrew it (eve's
/// `superseded-by-message`).
pub fn withdrawn_by_message(reason: Option<&str>) -> bool {
    reason == Some("superseded-by-message")
}

/// Whether a sign-in's end says a newer attempt replaced it (eve closes the older one
/// `failed`, "Superseded by a newer authorization attempt."): not a failure to show. A
/// sign-in withdrawn by the person's message (`superseded-by-message`) is not one.
pub fn superseded(reason: Option<&str>) -> bool {
    reason.is_some_and(|r| {
        let r = r.to_ascii_lowercase();
        r.contains("superseded") && !r.contains("message")
    })
}

/// Where a turn stands after a record, as far as following it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnEnd {
    /// The session waits for the person's next message.
    Waiting,
    /// The turn is held until the person answers a question, an approval or a sign-in.
    NeedsInput,
    /// The session is over: completed.
    Complete,
    /// The session is over: failed.
    Failed,
}

impl Fact {
    /// Whether this fact ends what a watcher follows, and how, as far as the record
    /// alone says: a watch decides with what it saw before ([`super::turn::TurnTracker`]).
    pub fn turn_end(&self) -> Option<TurnEnd> {
        match self {
            Fact::Waiting { .. } => Some(TurnEnd::Waiting),
            Fact::TurnEnded {
                session_waits: true,
                ..
            } => Some(TurnEnd::Waiting),
            Fact::TurnHeld {
                for_person: Some(true),
                ..
            } => Some(TurnEnd::NeedsInput),
            // The answer was not taken: the turn is still held on the person.
            Fact::ResponseSettled { outcome, .. } if *outcome != ResponseOutcome::Applied => {
                Some(TurnEnd::NeedsInput)
            }
            Fact::SessionEnded { failed: true, .. } => Some(TurnEnd::Failed),
            Fact::SessionEnded { failed: false, .. } => Some(TurnEnd::Complete),
            _ => None,
        }
    }
}

/// Whether these facts end what a watcher follows, and how: the first that does.
pub fn turn_end(facts: &[Fact]) -> Option<TurnEnd> {
    facts.iter().find_map(Fact::turn_end)
}
