//! What each family of facts does to the conversation: a turn's course, what was
//! written, the agent's work, what it asked; and the seeds' own dialect.

use super::*;
use crate::missions::client::MissionSpec;

impl Conversation {
    /// A turn's start, hold and end, the session's end, and what the mission spent.
    pub(super) fn take_turn(&mut self, fact: &Fact, seq: u64) {
        match fact {
            Fact::TurnStarted => {
                self.progress.held_on = None;
                self.turn_started(seq);
            }
            // Held on its own work: goes on after the session's wait (eve B).
            Fact::TurnEnded { held: true, .. } => {}
            Fact::TurnEnded { outcome, error, .. } => {
                self.progress.held_on = None;
                self.close_turn(outcome, seq);
                if *outcome == TurnOutcome::Cancelled {
                    self.end_open(seq);
                } else {
                    // A turn settles only once the tasks its calls started are done:
                    // eve 1.x sends no end for an agent task, so its turn's end is the
                    // task's.
                    self.end_tasks(seq);
                }
                if *outcome == TurnOutcome::Failed {
                    let msg = error.clone().unwrap_or("The turn failed.".into());
                    self.push(ItemKind::Failure, msg, seq);
                }
            }
            Fact::TurnHeld {
                for_person: Some(false),
                awaiting,
            } => self.progress.held_on = Some(self.awaited(awaiting)),
            Fact::TurnHeld { .. } | Fact::TurnResumed => self.progress.held_on = None,
            // Before eve 0.70 a turn ends at the session's wait, with no end of its own.
            Fact::Waiting { .. } => {
                self.progress.held_on = None;
                self.close_turn(&TurnOutcome::Completed, seq);
            }
            Fact::SessionEnded { failed, error } => {
                self.progress.held_on = None;
                let how = if *failed {
                    TurnOutcome::Failed
                } else {
                    TurnOutcome::Completed
                };
                self.close_turn(&how, seq);
                if *failed {
                    let msg = error.clone().unwrap_or("The mission failed.".into());
                    self.end_open(seq);
                    self.push(ItemKind::Failure, msg, seq);
                }
            }
            Fact::TaskResult { tasks, text } => {
                for task in tasks {
                    if let Some(at) = self.take_key(&format!("task:{task}")) {
                        self.settle_step(at, &WorkOutcome::Completed, None, None, seq);
                    }
                }
                let text = text.clone().unwrap_or_else(|| match tasks.as_slice() {
                    [] => "A background task finished.".to_owned(),
                    ids => format!("Background task {} finished.", ids.join(", ")),
                });
                self.push(ItemKind::Result, text, seq);
            }
            Fact::Spent { usd } => {
                self.progress.spent_micros = self
                    .progress
                    .spent_micros
                    .saturating_add((usd * 1e6).round() as u64);
            }
            Fact::SpendReported { usd } => {
                self.progress.reported_usd = Some(*usd);
                self.progress.micros_at_report = self.progress.spent_micros;
            }

            _ => {}
        }
    }

    /// What the person and the agent wrote: messages, their parts as they stream, files.
    pub(super) fn take_content(&mut self, fact: &Fact, seq: u64) {
        match fact {
            Fact::UserMessage { text, files } => {
                let at = self.push(ItemKind::User, text.clone(), seq);
                let item = &mut self.items[at as usize];
                item.files = files.clone();
                item.mission = MissionSpec::read(text);
            }
            // A file the agent made goes with the reply it belongs to: the turn's last
            // assistant message, or one of its own when the turn has none yet.
            Fact::FileMade { file } => {
                let at = match self.last_reply_in_turn() {
                    Some(at) => at,
                    None => self.push(ItemKind::Assistant, String::new(), seq),
                };
                let item = self.touch(at, seq);
                if item.files.len() < MAX_FILES && !item.files.contains(file) {
                    item.files.push(file.clone());
                }
            }
            Fact::Delta { part, kind, text } => self.delta(part, *kind, text, seq),
            Fact::PartCompleted {
                part,
                kind,
                whole,
                narration,
            } => {
                // An empty part with nothing streamed into it has nothing to show.
                if whole.is_none() && !self.has_key(part) {
                    return;
                }
                let at = self.part(part, item_kind(*kind), seq);
                self.take_key(part);
                self.finish(at, whole.as_deref(), *narration, seq);
            }
            Fact::StepFailed { message } => {
                let msg = message.clone().unwrap_or("A step failed.".into());
                self.push(ItemKind::Failure, msg, seq);
            }
            _ => {}
        }
    }

    /// The agent's work: calls, the tasks they start, the sub-agents they hand work to.
    pub(super) fn take_work(&mut self, fact: &Fact, seq: u64) {
        match fact {
            Fact::CallRequested { call, name, input } => {
                self.open_step(format!("call:{call}"), "tool", name, input.as_ref(), seq);
            }
            Fact::CallInput { call, delta } => self.call_input(call, delta, seq),
            Fact::CallSettled {
                call,
                name,
                status,
                output,
                error,
            } => {
                // A call seen only in its approval (or whose request was lost) still
                // shows as a step.
                let key = format!("call:{call}");
                let at = match self.take_key(&key) {
                    Some(at) => at,
                    None => {
                        let name = name.as_deref().unwrap_or("tool");
                        self.open_step(String::new(), "tool", name, None, seq)
                    }
                };
                self.settle_step(at, status, output.as_ref(), error.clone(), seq);
                // An interrupted call (one that needs a sign-in) may run again once the
                // turn resumes: its end then settles this same step.
                if *status == WorkOutcome::Interrupted {
                    self.remember(key, at);
                } else if let Some(task) = self.take_key(&format!("taskcall:{call}")) {
                    // The task this call started ends with it.
                    self.forget(task);
                    self.settle_step(task, status, None, None, seq);
                }
            }
            Fact::TaskStarted {
                task,
                name,
                call,
                detached,
            } => {
                // The task a call started is that call's work: one step, not two.
                let started_by = call.as_ref().and_then(|c| self.key(&format!("call:{c}")));
                if let Some(at) = started_by {
                    self.remember(format!("task:{task}"), at);
                    return;
                }
                let at = self.open_step(format!("task:{task}"), "task", name, None, seq);
                // One that runs past its turn ends with its result, not with the turn.
                if let (Some(call), false) = (call, detached) {
                    self.remember(format!("taskcall:{call}"), at);
                }
            }
            Fact::TaskSettled {
                task,
                status,
                output,
                error,
            } => {
                if let Some(at) = self.take_key(&format!("task:{task}")) {
                    // Nothing else ends it now (the call that started it, its turn).
                    self.forget(at);
                    self.settle_step(at, status, output.as_ref(), error.clone(), seq);
                }
            }
            Fact::ChildStarted {
                key,
                name,
                ends_here,
                call,
                session,
                stream,
            } => {
                let at = self.child_started(key, name, *ends_here, call.as_deref(), seq);
                // Openable when the record says which session, and by which call.
                if let (Some(call), Some(session)) = (call, session)
                    && let Some(step) = &mut self.items[at as usize].step
                {
                    step.child = Some(ChildRef {
                        call_id: call.clone(),
                        session_id: session.clone(),
                        stream_path: stream.clone(),
                    });
                }
            }
            Fact::ChildEnded { key, output } => {
                if let Some(at) = self.take_key(&format!("agent:{key}")) {
                    self.settle_step(at, &WorkOutcome::Completed, output.as_ref(), None, seq);
                }
            }
            _ => {}
        }
    }

    /// What the agent asked the person (questions, approvals, sign-ins) and the answers.
    pub(super) fn take_request(&mut self, fact: &Fact, seq: u64) {
        match fact {
            Fact::RequestOpened(request) => self.ask(request, seq),
            Fact::ResponseSubmitted {
                response,
                interaction,
            } => {
                if let Some(at) = self.key(&format!("req:{interaction}")) {
                    self.remember(format!("resp:{response}"), at);
                }
            }
            Fact::ResponseSettled {
                response,
                outcome,
                reason,
            } => {
                let Some(at) = self.take_key(&format!("resp:{response}")) else {
                    return;
                };
                // Taken: the interaction's own end says how. Otherwise it is still open,
                // and says plainly what became of the answer.
                if *outcome != ResponseOutcome::Applied
                    && let Some(r) = &mut self.touch(at, seq).request
                {
                    r.refusal = Some(refusal_words(outcome, reason.as_deref()));
                }
            }
            Fact::RequestSettled {
                id,
                outcome,
                reason,
                response,
            } => self.resolve(
                id,
                outcome.as_ref(),
                reason.as_deref(),
                response.as_ref(),
                seq,
            ),
            Fact::SignInOpened {
                sign_in,
                interaction,
            } => {
                let at = self.sign_in(sign_in, seq);
                if let Some(id) = interaction {
                    self.remember(format!("req:{id}"), at);
                }
            }
            Fact::SignInSettled {
                name,
                attempt,
                outcome,
                reason,
            } => self.sign_in_settled(
                name,
                attempt.as_deref(),
                outcome.as_ref(),
                reason.as_deref(),
                seq,
            ),
            _ => {}
        }
    }

    /// The seeds' own dialect: a plan, searches and the sources they found, evidence,
    /// verified findings and the report, as the same kinds of item eve's records make.
    pub(super) fn seeds(&mut self, fact: &Fact, seq: u64) {
        match fact {
            Fact::Plan { steps } => {
                let md = steps
                    .iter()
                    .enumerate()
                    .map(|(i, step)| format!("{}. {}", i + 1, one_line(step)))
                    .collect::<Vec<_>>()
                    .join("\n");
                let at = self.push(ItemKind::Assistant, format!("Plan:\n\n{md}"), seq);
                self.finish(at, None, true, seq);
            }
            Fact::Searched { query, engine } => {
                let name = engine
                    .as_ref()
                    .map_or("search".to_owned(), |e| format!("search ({e})"));
                let input = serde_json::json!({"query": query});
                let at = self.open_step(String::new(), "tool", &name, Some(&input), seq);
                self.settle_step(at, &WorkOutcome::Completed, None, None, seq);
                self.progress.last_search = Some(at);
            }
            Fact::SourceFound { url, title } => {
                let at = match self.progress.last_search {
                    Some(at) => at,
                    None => {
                        let input = serde_json::json!({"url": url});
                        let at = self.open_step(String::new(), "tool", "source", Some(&input), seq);
                        self.settle_step(at, &WorkOutcome::Completed, None, None, seq);
                        at
                    }
                };
                self.add_sources(at, vec![(url.clone(), title.clone())], seq);
            }
            Fact::Evidence { quote, source_url } => {
                let mut text = format!("> {}", one_line(quote));
                if let Some(url) = source_url {
                    text.push_str(&format!("\n\n(from <{url}>)"));
                }
                let at = self.push(ItemKind::Assistant, text, seq);
                self.finish(at, None, true, seq);
            }
            Fact::FindingVerified { claim } => {
                let text = format!("Verified: {}", one_line(claim));
                let at = self.push(ItemKind::Assistant, text, seq);
                self.finish(at, None, true, seq);
            }
            Fact::Report {
                title,
                summary,
                findings,
            } => {
                let mut md = String::new();
                if let Some(title) = title {
                    md.push_str(&format!("# {}\n\n", one_line(title)));
                }
                if let Some(summary) = summary {
                    md.push_str(summary.trim());
                    md.push_str("\n\n");
                }
                for f in findings {
                    md.push_str(&format!("- {}\n", one_line(f)));
                }
                if !md.is_empty() {
                    let at = self.push(ItemKind::Assistant, md.trim_end().to_owned(), seq);
                    self.finish(at, None, false, seq);
                }
            }
            _ => {}
        }
    }
}
