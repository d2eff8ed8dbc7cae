//! Where a turn ends when one record alone cannot say: eve B before 0.70 holds a turn
//! with `turn.waiting` and no `on`, or with a `session.waiting` inside a turn that goes
//! on (after `turn.completed {held: true}`, or with no turn end before it), both for a
//! question and for its own background tasks. As eve's own client does
//! (`TurnEndTracker` in `client/session-utils.ts`, both versions), such a hold ends what
//! a watcher follows only while a question it saw is still unanswered; otherwise the
//! turn goes on by itself to its real end. The watch and the lifecycle fold both decide
//! through this, so they agree.

use crate::missions::protocol::facts::{Awaited, Fact, TurnEnd};
use std::collections::BTreeSet;

/// Open questions (and running tasks) remembered at most: a server that never settles
/// them must not grow this without end. Past it more are not remembered, and one
/// still open is all a hold needs.
const MAX_OPEN: usize = 256;

/// What the records so far leave open: questions and the turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnTracker {
    /// Questions, approvals and budget prompts asked and not yet settled.
    open_requests: BTreeSet<String>,
    /// The turn is held on its own work (`turn.completed {held: true}`, a `turn.waiting`
    /// that is not the person's) or has background tasks still running: a
    /// `session.waiting` now is not its end.
    held: bool,
    /// Background tasks started in this turn and not settled.
    tasks: BTreeSet<String>,
    /// Tasks that run on past their turn: their result comes in a turn of its own, so a
    /// `session.waiting` is not the end while one runs.
    detached: BTreeSet<String>,
    /// Folded from a stored status that waited on the person, with the questions
    /// themselves unknown: counts as one open question until one is settled.
    assumed_open: bool,
    /// Sign-ins asked and not yet settled: 27's interactions, B's attempts
    /// (`auth:<attemptId or name>`). A turn held only on them goes on once the browser's
    /// callback arrives, so a watcher keeps following (as eve's web client does).
    sign_ins: BTreeSet<String>,
}

impl TurnTracker {
    /// A tracker that knows only that the person was being asked something.
    pub fn assuming_open_question() -> Self {
        Self {
            assumed_open: true,
            ..Self::default()
        }
    }

    /// A question is still open: a hold that does not say whose it is is the person's.
    pub fn question_open(&self) -> bool {
        self.assumed_open || !self.open_requests.is_empty()
    }

    /// Whether what these facts mean depends on the records before them (a wait, a hold
    /// that does not say whose it is): only then must a fold that starts mid-stream read
    /// them.
    pub fn depends_on_history(facts: &[Fact]) -> bool {
        facts.iter().any(|f| {
            matches!(
                f,
                Fact::Waiting { .. }
                    | Fact::TurnHeld {
                        for_person: None,
                        ..
                    }
            )
        })
    }

    /// A hold for the person that is only a sign-in's: no question open, and every
    /// interaction it awaits is a sign-in.
    fn held_on_sign_in(&self, awaiting: &[Awaited]) -> bool {
        !self.sign_ins.is_empty()
            && !self.question_open()
            && awaiting.iter().all(|a| match a {
                Awaited::Interaction(id) => self.sign_ins.contains(id),
                _ => true,
            })
    }

    /// The turn goes on by itself past a `session.waiting`.
    fn goes_on(&self) -> bool {
        self.held || !self.tasks.is_empty() || !self.detached.is_empty()
    }

    /// Takes one fact; whether it ends what a watcher follows, and how.
    pub fn observe(&mut self, fact: &Fact) -> Option<TurnEnd> {
        match fact {
            Fact::RequestOpened(r) if self.open_requests.len() < MAX_OPEN => {
                self.open_requests.insert(r.id.clone());
            }
            Fact::RequestSettled { id, .. } => {
                self.open_requests.remove(id);
                self.sign_ins.remove(id);
                self.assumed_open = false;
            }
            Fact::SignInOpened {
                sign_in,
                interaction,
            } => {
                let key = match interaction {
                    Some(id) => id.clone(),
                    None => sign_in_key(&sign_in.name, sign_in.attempt.as_deref()),
                };
                if self.sign_ins.len() < MAX_OPEN {
                    self.sign_ins.insert(key);
                }
            }
            Fact::SignInSettled { name, attempt, .. } => {
                self.sign_ins.remove(&sign_in_key(name, attempt.as_deref()));
            }
            Fact::TurnHeld {
                for_person: Some(true),
                awaiting,
            } if self.held_on_sign_in(awaiting) => return None,
            // A new turn: the person spoke again, and what an earlier one asked is moot
            // (eve withdraws it).
            Fact::TurnStarted => *self = Self::default(),
            Fact::TaskStarted {
                task,
                detached: true,
                ..
            } if self.detached.len() < MAX_OPEN => {
                self.detached.insert(task.clone());
            }
            Fact::TaskStarted { task, .. } if self.tasks.len() < MAX_OPEN => {
                self.tasks.insert(task.clone());
            }
            Fact::TaskSettled { task, .. } => {
                self.tasks.remove(task);
                self.detached.remove(task);
            }
            Fact::TurnResumed => self.held = false,
            Fact::TurnEnded { held: true, .. } => self.held = true,
            Fact::TurnEnded { .. } => {
                self.held = false;
                self.tasks.clear();
            }
            Fact::TurnHeld {
                for_person: None, ..
            } => {
                if self.question_open() {
                    return Some(TurnEnd::NeedsInput);
                }
                self.held = true;
                return None;
            }
            Fact::TurnHeld {
                for_person: Some(false),
                ..
            } => self.held = true,
            Fact::Waiting { .. } => {
                if self.question_open() {
                    return Some(TurnEnd::NeedsInput);
                }
                if self.goes_on() {
                    return None;
                }
            }
            Fact::SessionEnded { .. } => *self = Self::default(),
            _ => {}
        }
        fact.turn_end()
    }

    /// Takes a record's facts; the first end among them.
    pub fn observe_all(&mut self, facts: &[Fact]) -> Option<TurnEnd> {
        let mut first = None;
        for fact in facts {
            let end = self.observe(fact);
            first = first.or(end);
        }
        first
    }
}

/// B's sign-in attempt as the tracker knows it.
fn sign_in_key(name: &str, attempt: Option<&str>) -> String {
    format!("auth:{}", attempt.unwrap_or(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::missions::protocol::{self, MissionEvent};

    /// Where a recorded stream ends for a watcher: the index of the record, and how.
    fn ends(records: &[(&str, &str)]) -> Vec<(usize, TurnEnd)> {
        let mut t = TurnTracker::default();
        records
            .iter()
            .enumerate()
            .filter_map(|(i, (name, data))| {
                let e = MissionEvent::new(None, (*name).into(), data);
                t.observe_all(&protocol::read(&e)).map(|end| (i, end))
            })
            .collect()
    }

    const QUESTION: (&str, &str) = (
        "input.requested",
        r#"{"requests":[{"requestId":"req_1","kind":"question","prompt":"Which years?"}]}"#,
    );
    const ANSWERED: (&str, &str) = (
        "input.resolved",
        r#"{"resolutions":[{"requestId":"req_1","outcome":"answered","response":{"text":"all"}}]}"#,
    );
    const TASK: (&str, &str) = (
        "task.started",
        r#"{"taskId":"task_1","callId":"call_1","kind":"tool","name":"crawl","turnId":"t1"}"#,
    );
    const TASK_DONE: (&str, &str) = (
        "task.settled",
        r#"{"taskId":"task_1","status":"completed","output":"12 pages"}"#,
    );
    const STARTED: (&str, &str) = ("turn.started", r#"{"turnId":"t1"}"#);
    const REPLY: (&str, &str) = (
        "message.completed",
        r#"{"turnId":"t1","message":"Done.","finishReason":"stop"}"#,
    );
    const COMPLETED: (&str, &str) = ("turn.completed", r#"{"turnId":"t1"}"#);
    const HELD: (&str, &str) = ("turn.completed", r#"{"turnId":"t1","held":true}"#);
    const WAITING: (&str, &str) = ("session.waiting", r#"{"continuationToken":""}"#);
    const NO_ON: (&str, &str) = ("turn.waiting", r#"{"turnId":"t1"}"#);

    #[test]
    fn a_turn_waiting_without_on_is_the_persons_only_with_a_question_open() {
        // A question: the watch ends at the hold.
        let s = [
            STARTED, QUESTION, NO_ON, ANSWERED, REPLY, COMPLETED, WAITING,
        ];
        assert_eq!(
            ends(&s),
            vec![(2, TurnEnd::NeedsInput), (6, TurnEnd::Waiting)]
        );
        // Background tasks: it goes on by itself to the turn's end.
        let s = [STARTED, TASK, NO_ON, TASK_DONE, REPLY, COMPLETED, WAITING];
        assert_eq!(ends(&s), vec![(6, TurnEnd::Waiting)]);
        // 0.70's `on` still says it alone.
        let on_tasks = ("turn.waiting", r#"{"turnId":"t1","on":"tasks"}"#);
        let s = [STARTED, QUESTION, on_tasks];
        assert_eq!(ends(&s), vec![]);
    }

    #[test]
    fn a_turn_completed_held_goes_on_past_its_session_waiting_unless_a_question_is_open() {
        let s = [
            STARTED, TASK, HELD, WAITING, TASK_DONE, REPLY, COMPLETED, WAITING,
        ];
        assert_eq!(ends(&s), vec![(7, TurnEnd::Waiting)]);
        let s = [
            STARTED, QUESTION, HELD, WAITING, ANSWERED, REPLY, COMPLETED, WAITING,
        ];
        assert_eq!(
            ends(&s),
            vec![(3, TurnEnd::NeedsInput), (7, TurnEnd::Waiting)]
        );
    }

    /// eve's test "follows a held turn past its session.waiting to its end": a
    /// `session.waiting` inside the open turn, with no turn end before it.
    #[test]
    fn a_session_waiting_inside_a_turn_with_tasks_running_is_not_its_end() {
        let s = [STARTED, TASK, WAITING, TASK_DONE, REPLY, COMPLETED, WAITING];
        assert_eq!(ends(&s), vec![(6, TurnEnd::Waiting)]);
        let s = [
            STARTED, QUESTION, WAITING, ANSWERED, REPLY, COMPLETED, WAITING,
        ];
        assert_eq!(
            ends(&s),
            vec![(2, TurnEnd::NeedsInput), (6, TurnEnd::Waiting)]
        );
        // A turn with nothing running that waits is over (the seeds' dialect, eve A).
        assert_eq!(
            ends(&[STARTED, REPLY, WAITING]),
            vec![(2, TurnEnd::Waiting)]
        );
    }

    #[test]
    fn a_new_turn_forgets_an_earlier_turns_question() {
        let s = [STARTED, QUESTION, COMPLETED, WAITING, STARTED, TASK, NO_ON];
        assert_eq!(ends(&s), vec![(3, TurnEnd::NeedsInput)]);
    }

    /// A background result arrives in a turn of its own once the session is idle: a
    /// result in the conversation, not the person's message, and the watch that follows
    /// it ends at that turn's wait.
    #[test]
    fn a_task_result_turn_is_a_result_not_the_persons_message() {
        use crate::missions::conversation::{Conversation, ItemKind};
        let result = (
            "message.received",
            r#"{"turnId":"t2","kind":"task.result","taskIds":["task_1"],"message":"archive finished: 12 sources"}"#,
        );
        let s = [
            STARTED, REPLY, COMPLETED, WAITING, STARTED, result, REPLY, COMPLETED, WAITING,
        ];
        assert_eq!(ends(&s), vec![(3, TurnEnd::Waiting), (8, TurnEnd::Waiting)]);
        let events: Vec<MissionEvent> = s
            .iter()
            .map(|(n, d)| MissionEvent::new(None, (*n).into(), d))
            .collect();
        let c = Conversation::from_events(&events);
        let results: Vec<_> = c
            .items
            .iter()
            .filter(|i| i.kind == ItemKind::Result)
            .collect();
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].text, "archive finished: 12 sources");
        assert!(c.items.iter().all(|i| i.kind != ItemKind::User));
        assert!(c.messages().iter().all(|m| !m.text.contains("archive")));
    }
}
