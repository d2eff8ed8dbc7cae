//! What each fact does to the conversation: which item it opens, grows or settles. Open
//! parts, calls, requests and sign-ins are found again by key (`call:…`, `req:…`), kept
//! in [`Progress`] so records arriving after a restart continue them.

use crate::missions::conversation::readable::{
    MAX_TOOL_TEXT, bounded, one_line, readable_input, readable_output, sources_of, step_line,
};
use crate::missions::conversation::{
    ChildRef, Conversation, Item, ItemKind, PendingRequest, SignIn, Source, Step, StepStatus,
};
use crate::missions::protocol::facts::{
    Awaited, DeltaText, Fact, MAX_FILES, PartKind, Request, RequestOutcome, ResponseOutcome,
    SignInOutcome, SignInPrompt, TurnOutcome, WorkOutcome, is_approval_kind, superseded,
};
use serde_json::Value;

/// Keys of open parts, calls and requests remembered at once; a part whose end was lost
/// is forgotten first.
const MAX_OPEN_KEYS: usize = 4_096;

mod families;

impl Conversation {
    /// Takes what record `seq` says into account.
    pub fn take_facts(&mut self, facts: &[Fact], seq: u64) {
        self.progress.upto = self.progress.upto.max(seq);
        for fact in facts {
            self.take(fact, seq);
        }
    }

    fn take(&mut self, fact: &Fact, seq: u64) {
        match fact {
            Fact::TurnStarted
            | Fact::TurnEnded { .. }
            | Fact::TurnHeld { .. }
            | Fact::TurnResumed
            | Fact::Waiting { .. }
            | Fact::SessionEnded { .. }
            | Fact::TaskResult { .. }
            | Fact::Spent { .. }
            | Fact::SpendReported { .. } => self.take_turn(fact, seq),
            Fact::UserMessage { .. }
            | Fact::FileMade { .. }
            | Fact::Delta { .. }
            | Fact::PartCompleted { .. }
            | Fact::StepFailed { .. } => self.take_content(fact, seq),
            Fact::CallRequested { .. }
            | Fact::CallInput { .. }
            | Fact::CallSettled { .. }
            | Fact::TaskStarted { .. }
            | Fact::TaskSettled { .. }
            | Fact::ChildStarted { .. }
            | Fact::ChildEnded { .. } => self.take_work(fact, seq),
            Fact::RequestOpened { .. }
            | Fact::ResponseSubmitted { .. }
            | Fact::ResponseSettled { .. }
            | Fact::RequestSettled { .. }
            | Fact::SignInOpened { .. }
            | Fact::SignInSettled { .. } => self.take_request(fact, seq),
            Fact::Plan { .. }
            | Fact::Searched { .. }
            | Fact::SourceFound { .. }
            | Fact::Evidence { .. }
            | Fact::FindingVerified { .. }
            | Fact::Report { .. } => self.seeds(fact, seq),
            // Which turn took a reply: the watch's concern, not the conversation's.
            Fact::DeliveryTaken { .. } => {}
        }
    }

    /// What a held turn waits on, as the window's status line says it: "the sub-agent
    /// researcher", "the background task index".
    fn awaited(&self, awaiting: &[Awaited]) -> String {
        let named = |key: String| {
            self.key(&key)
                .and_then(|at| self.items[at as usize].step.as_ref())
                .map(|s| s.name.clone())
        };
        let each: Vec<String> = awaiting
            .iter()
            .map(|a| match a {
                Awaited::Call(id) => {
                    let agent = self.progress.agents.iter().rev().find(|(c, _)| c == id);
                    match (agent, named(format!("call:{id}"))) {
                        (Some((_, name)), _) => format!("the sub-agent {name}"),
                        (None, Some(name)) => name,
                        (None, None) => "a call it made".into(),
                    }
                }
                Awaited::Task(id) => match named(format!("task:{id}")) {
                    Some(name) => format!("the background task {name}"),
                    None => "a background task".into(),
                },
                Awaited::Interaction(_) => "your answer".into(),
            })
            .collect();
        if each.is_empty() {
            "its background tasks".into()
        } else {
            each.join(" and ")
        }
    }

    fn child_started(
        &mut self,
        key: &str,
        name: &str,
        ends_here: bool,
        call: Option<&str>,
        seq: u64,
    ) -> u32 {
        if let Some(call) = call {
            if self.progress.agents.len() >= MAX_OPEN_KEYS {
                self.progress.agents.remove(0);
            }
            self.progress
                .agents
                .push((call.to_owned(), name.to_owned()));
        }
        let at = self.open_step(format!("agent:{key}"), "agent", name, None, seq);
        // Followed on its own stream: a finished step here.
        if !ends_here {
            self.take_key(&format!("agent:{key}"));
            self.settle_step(at, &WorkOutcome::Completed, None, None, seq);
        }
        at
    }

    /// A sign-in attempt ended. Only the attempt the item shows settles it: an older
    /// attempt's end, arriving after its replacement, says nothing new. An attempt ended
    /// because a newer one replaced it closes quietly (`superseded`), and the item stays
    /// the service's, for the newer attempt to take over.
    fn sign_in_settled(
        &mut self,
        name: &str,
        attempt: Option<&str>,
        outcome: Option<&SignInOutcome>,
        reason: Option<&str>,
        seq: u64,
    ) {
        let key = format!("auth:{name}");
        let Some(at) = self.key(&key) else {
            return;
        };
        let shown = self.items[at as usize]
            .sign_in
            .as_ref()
            .and_then(|x| x.attempt.as_deref());
        if attempt.is_some() && shown.is_some() && attempt != shown {
            return;
        }
        let replaced = superseded(reason);
        if !replaced {
            self.take_key(&key);
        }
        let item = self.touch(at, seq);
        item.open = false;
        if let Some(x) = &mut item.sign_in {
            x.outcome = Some(match (replaced, outcome) {
                (true, _) => SignInOutcome::Superseded.to_string(),
                (false, Some(o)) => o.to_string(),
                (false, None) => SignInOutcome::Authorized.to_string(),
            });
            x.outcome_text = x.outcome_words();
        }
    }

    fn turn_started(&mut self, seq: u64) {
        // eve before 0.31 says nothing of an answer: the next turn is how it was
        // answered (an option, a text, or a message it took as one). Later releases
        // settle each request before a new turn, so nothing is left here for them.
        // (A release that settles it after the turn's start still can: its key is kept.)
        let asked: Vec<u32> = (self.progress.open.iter())
            .filter(|(k, _)| k.starts_with("req:"))
            .map(|(_, at)| *at)
            .collect();
        for at in asked {
            let unsettled =
                (self.items[at as usize].request.as_ref()).is_some_and(|r| r.outcome.is_none());
            if !unsettled {
                continue;
            }
            let item = self.touch(at, seq);
            item.open = false;
            if let Some(r) = &mut item.request {
                r.outcome = Some("answered-by-next-turn".into());
                r.outcome_text = r.outcome_words();
            }
        }
        self.progress.turns += 1;
        let n = self.progress.turns;
        let at = self.push(ItemKind::Turn, format!("Turn {n}"), seq);
        self.items[at as usize].open = true;
        // A turn left open (its end lost) is closed by the next one's start.
        if let Some(old) = self.take_key("turn") {
            self.touch(old, seq).open = false;
        }
        self.remember("turn".into(), at);
    }

    fn close_turn(&mut self, outcome: &TurnOutcome, seq: u64) {
        if let Some(at) = self.take_key("turn") {
            let n = self.turn_number(at);
            let item = self.touch(at, seq);
            item.open = false;
            item.text = format!("Turn {n} {outcome}");
        }
    }

    fn delta(&mut self, part: &str, kind: Option<PartKind>, text: &DeltaText, seq: u64) {
        let kind = match kind {
            Some(kind) => item_kind(kind),
            None if self.has_key(part) => ItemKind::Assistant,
            // Only a part's first record names its kind.
            None => return,
        };
        let at = self.part(part, kind, seq);
        match text {
            DeltaText::SoFar(so_far) => self.touch(at, seq).text = so_far.clone(),
            DeltaText::Append(delta) => self.touch(at, seq).text.push_str(delta),
            DeltaText::None => {}
        }
    }

    fn call_input(&mut self, call: &str, delta: &str, seq: u64) {
        let Some(at) = self.key(&format!("call:{call}")) else {
            return;
        };
        // The whole input, when it came with the request, is what the step shows.
        let asked = self.items[at as usize]
            .step
            .as_ref()
            .is_some_and(|st| !st.input.is_empty());
        let buffer = self.progress.inputs.iter_mut().find(|(i, _)| *i == at);
        let raw = match buffer {
            Some((_, raw)) => raw,
            None if asked => return,
            None => {
                self.progress.inputs.push((at, String::new()));
                &mut self.progress.inputs.last_mut().expect("just pushed").1
            }
        };
        if raw.len() < MAX_TOOL_TEXT {
            raw.push_str(delta);
        }
        let shown = bounded(raw);
        if let Some(step) = &mut self.touch(at, seq).step {
            step.input = shown;
        }
    }

    // ---- building blocks ----

    fn push(&mut self, kind: ItemKind, text: String, seq: u64) -> u32 {
        // Something new happened: a held turn has moved on.
        self.progress.held_on = None;
        let index = self.items.len() as u32;
        self.items.push(Item::new(index, kind, text, seq));
        self.changed.insert(index);
        index
    }

    /// The current turn's last assistant message.
    fn last_reply_in_turn(&self) -> Option<u32> {
        self.items
            .iter()
            .rev()
            .take_while(|i| i.kind != ItemKind::Turn)
            .find(|i| i.kind == ItemKind::Assistant)
            .map(|i| i.index)
    }

    fn touch(&mut self, at: u32, seq: u64) -> &mut Item {
        self.changed.insert(at);
        let item = &mut self.items[at as usize];
        item.last_seq = item.last_seq.max(seq);
        item
    }

    fn key(&self, key: &str) -> Option<u32> {
        self.progress
            .open
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, at)| *at)
    }

    fn has_key(&self, key: &str) -> bool {
        self.key(key).is_some()
    }

    fn remember(&mut self, key: String, at: u32) {
        self.progress.open.retain(|(k, _)| *k != key);
        if self.progress.open.len() >= MAX_OPEN_KEYS {
            self.progress.open.remove(0);
        }
        self.progress.open.push((key, at));
    }

    /// Forgets every key that names item `at`.
    fn forget(&mut self, at: u32) {
        self.progress.open.retain(|(_, i)| *i != at);
    }

    /// Closes every task a call started that is still open, as completed. (A background
    /// task of eve B may outlive its turn: its result comes in a turn of its own.)
    fn end_tasks(&mut self, seq: u64) {
        let tasks: Vec<u32> = (self.progress.open.iter())
            .filter(|(k, _)| k.starts_with("taskcall:"))
            .map(|(_, at)| *at)
            .collect();
        for at in tasks {
            self.forget(at);
            self.settle_step(at, &WorkOutcome::Completed, None, None, seq);
        }
    }

    fn take_key(&mut self, key: &str) -> Option<u32> {
        let at = self.key(key)?;
        self.progress.open.retain(|(k, _)| k != key);
        Some(at)
    }

    /// The message or reasoning `key` streams into, opened if new.
    fn part(&mut self, key: &str, kind: ItemKind, seq: u64) -> u32 {
        if let Some(at) = self.key(key) {
            return at;
        }
        let at = self.push(kind, String::new(), seq);
        self.items[at as usize].open = true;
        self.remember(key.to_owned(), at);
        at
    }

    fn finish(&mut self, at: u32, whole: Option<&str>, narration: bool, seq: u64) {
        let item = self.touch(at, seq);
        if let Some(whole) = whole {
            item.text = whole.to_owned();
        }
        item.open = false;
        if item.kind == ItemKind::Assistant {
            item.narration = narration;
            let (html, blocks) =
                crate::missions::conversation::markdown::to_html_blocks(&item.text);
            item.html = Some(html);
            item.html_blocks = blocks;
        }
    }

    fn turn_number(&self, at: u32) -> u32 {
        self.items[..=at as usize]
            .iter()
            .filter(|i| i.kind == ItemKind::Turn)
            .count() as u32
    }

    fn open_step(
        &mut self,
        key: String,
        kind: &str,
        name: &str,
        input: Option<&Value>,
        seq: u64,
    ) -> u32 {
        let input = input.map(readable_input).unwrap_or_default();
        let at = self.push(ItemKind::Tool, String::new(), seq);
        let item = &mut self.items[at as usize];
        item.open = true;
        item.step = Some(Step {
            kind: kind.to_owned(),
            name: name.to_owned(),
            input,
            status: StepStatus::Running,
            output: None,
            error: None,
            sources: Vec::new(),
            child: None,
        });
        item.text = step_line(item.step.as_ref().expect("just set"), &self.sources);
        if !key.is_empty() {
            self.remember(key, at);
        }
        at
    }

    fn settle_step(
        &mut self,
        at: u32,
        status: &WorkOutcome,
        output: Option<&Value>,
        error: Option<String>,
        seq: u64,
    ) {
        use WorkOutcome as W;
        let status = match status {
            W::Failed | W::Error => StepStatus::Failed,
            W::Rejected | W::Denied => StepStatus::Rejected,
            W::Cancelled | W::Interrupted | W::Abandoned => StepStatus::Cancelled,
            W::Completed | W::Other(_) => StepStatus::Completed,
        };
        let found = output.map(sources_of).unwrap_or_default();
        let streamed = self
            .progress
            .inputs
            .iter()
            .position(|(i, _)| *i == at)
            .map(|i| self.progress.inputs.swap_remove(i).1);
        let item = self.touch(at, seq);
        item.open = false;
        if let Some(step) = &mut item.step {
            step.status = status;
            if let Some(raw) = streamed {
                step.input = serde_json::from_str::<Value>(&raw)
                    .map(|v| readable_input(&v))
                    .unwrap_or_else(|_| bounded(&raw));
            }
            step.error = error;
            step.output = output
                .filter(|o| !o.is_null())
                .map(|o| readable_output(o, !found.is_empty()))
                .filter(|o| !o.is_empty());
        }
        self.add_sources(at, found, seq);
        let step = self.items[at as usize].step.clone();
        if let Some(step) = step {
            self.items[at as usize].text = step_line(&step, &self.sources);
        }
    }

    fn add_sources(&mut self, at: u32, found: Vec<(String, Option<String>)>, seq: u64) {
        if found.is_empty() {
            return;
        }
        let found_by = self.items[at as usize].step.clone().map(|mut step| {
            step.status = StepStatus::Completed;
            step_line(&step, &self.sources)
        });
        for (url, title) in found {
            let title = title.filter(|t| !t.trim().is_empty());
            if !self.source_urls.contains_key(&url) {
                self.source_urls.insert(url.clone(), self.sources.len());
                self.sources.push(Source {
                    url: url.clone(),
                    title: title.clone(),
                    item: at,
                    found_by: found_by.clone(),
                });
                self.new_sources += 1;
            }
            let item = self.touch(at, seq);
            if let Some(step) = &mut item.step
                && !step.sources.iter().any(|s| s.url == url)
            {
                step.sources.push(Source {
                    url,
                    title,
                    item: at,
                    found_by: None,
                });
            }
        }
    }

    fn ask(&mut self, request: &Request, seq: u64) {
        let request = PendingRequest {
            request_id: request.id.clone(),
            kind: request.kind.clone(),
            approval: is_approval_kind(&request.kind),
            prompt: request.prompt.clone(),
            title: request.title.clone(),
            options: request.options.clone(),
            allow_freeform: request.allow_freeform,
            outcome: None,
            reason: None,
            outcome_text: None,
            answer: None,
            refusal: None,
        };
        let key = format!("req:{}", request.request_id);
        let at = self.push(ItemKind::Question, request.prompt.clone(), seq);
        let item = &mut self.items[at as usize];
        item.open = true;
        item.request = Some(request);
        self.remember(key, at);
    }

    fn resolve(
        &mut self,
        id: &str,
        outcome: Option<&RequestOutcome>,
        reason: Option<&str>,
        response: Option<&Value>,
        seq: u64,
    ) {
        let Some(at) = self.take_key(&format!("req:{id}")) else {
            return;
        };
        if let Some(x) = &self.items[at as usize].sign_in {
            let name = x.name.clone();
            let attempt = x.attempt.clone().unwrap_or_else(|| id.to_owned());
            // eve 27's sign-in is an interaction: its attempt is the interaction.
            if attempt == id {
                // Its interaction's outcome is the sign-in's, by the same name.
                let how = outcome.map_or(SignInOutcome::Accepted, |o| {
                    SignInOutcome::from_wire(o.as_str())
                });
                self.sign_in_settled(&name, Some(id), Some(&how), reason, seq);
            }
            return;
        }
        let item = self.touch(at, seq);
        item.open = false;
        let outcome = outcome.map_or(RequestOutcome::Answered.to_string(), ToString::to_string);
        if let Some(r) = &mut item.request {
            let value = response.map(|v| v.get("value").unwrap_or(v));
            let option = value
                .and_then(|v| v.get("optionId"))
                .and_then(Value::as_str);
            r.answer = match option {
                Some(id) => Some(
                    r.options
                        .iter()
                        .find(|o| o.id == id)
                        .map_or(id.to_owned(), |o| o.label.clone()),
                ),
                None => value
                    .and_then(|v| v.get("text"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            };
            r.outcome = Some(outcome);
            r.refusal = None;
            r.reason = reason.map(str::to_owned);
            r.outcome_text = r.outcome_words();
        }
    }

    /// A sign-in attempt. A newer attempt for a service whose sign-in is still open
    /// (or was just superseded) takes over that item: one card per service, showing
    /// the newest link and code.
    fn sign_in(&mut self, prompt: &SignInPrompt, seq: u64) -> u32 {
        let sign_in = SignIn {
            name: prompt.name.clone(),
            description: prompt.description.clone(),
            url: prompt.url.clone(),
            user_code: prompt.user_code.clone(),
            expires_at: prompt.expires_at.clone(),
            instructions: prompt.instructions.clone(),
            attempt: prompt.attempt.clone(),
            outcome: None,
            outcome_text: None,
        };
        let key = format!("auth:{}", sign_in.name);
        let text = match &sign_in.description {
            Some(d) => format!("Sign in to {}: {d}", sign_in.name),
            None => format!("Sign in to {}", sign_in.name),
        };
        let at = match self.key(&key) {
            Some(at) => {
                // The replaced attempt's interaction no longer settles this item.
                let old = self.items[at as usize]
                    .sign_in
                    .as_ref()
                    .and_then(|x| x.attempt.clone());
                if let Some(old) = old.filter(|o| Some(o) != prompt.attempt.as_ref()) {
                    self.take_key(&format!("req:{old}"));
                }
                self.touch(at, seq).text = text;
                at
            }
            None => self.push(ItemKind::SignIn, text, seq),
        };
        let item = &mut self.items[at as usize];
        item.open = true;
        item.sign_in = Some(sign_in);
        self.remember(key, at);
        at
    }

    /// A cancelled or failed turn ends what it had open: its steps, questions, sign-ins
    /// and streaming messages (eve withdraws them).
    /// Ends what the turn left open, cancelled with it.
    fn end_open(&mut self, seq: u64) {
        let open: Vec<(String, u32)> = std::mem::take(&mut self.progress.open);
        for (key, at) in open {
            if key.starts_with("turn") {
                continue;
            }
            let item = self.touch(at, seq);
            item.open = false;
            if let Some(step) = &mut item.step {
                step.status = StepStatus::Cancelled;
            }
            // Text the cancel cut off is an aside, not the reply (eve 1.x says so with
            // `interrupted`; before, the text just stops).
            if item.kind == ItemKind::Assistant {
                item.narration = true;
            }
            if let Some(r) = &mut item.request {
                r.outcome = Some(RequestOutcome::Cancelled.to_string());
                r.outcome_text = r.outcome_words();
            }
            if let Some(x) = &mut item.sign_in {
                x.outcome = Some(SignInOutcome::Cancelled.to_string());
                x.outcome_text = x.outcome_words();
            }
        }
    }
}

/// What became of an answer the service took and then did not apply, in plain words.
fn refusal_words(outcome: &ResponseOutcome, reason: Option<&str>) -> String {
    let what = match outcome {
        ResponseOutcome::Refused => "The service refused your answer",
        ResponseOutcome::Withdrawn => "Your answer was withdrawn",
        ResponseOutcome::Expired => "Your answer expired before it was applied",
        ResponseOutcome::Abandoned => "Your answer was dropped: the turn went on without it",
        _ => "Your answer could not be applied",
    };
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => format!("{what}: {r}"),
        None => format!("{what}."),
    }
}

fn item_kind(kind: PartKind) -> ItemKind {
    match kind {
        PartKind::Text => ItemKind::Assistant,
        PartKind::Reasoning => ItemKind::Reasoning,
    }
}
