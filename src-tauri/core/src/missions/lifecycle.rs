//! Where a mission stands: its status, and the one fold that moves it as records arrive.
//! The store runs it as it appends, in the same transaction; whoever appends announces
//! the status it got back.

use crate::missions::protocol::facts::{ResponseOutcome, TurnOutcome};
use crate::missions::protocol::{Fact, TurnEnd, TurnTracker};
use serde::Serialize;
use ts_rs::TS;

/// eve's `410 session_expired`, said once for the stream, the window and the CLI.
pub const EXPIRED: &str = "The service no longer keeps this mission's history (it expired), so it cannot be followed any more. What this computer stored stays readable.";

/// eve's `409 session_stranded` (another eve version built the session's owner, so it can
/// never run on this deployment), said once for a follow-up and for the stream.
pub const STRANDED: &str = "The service can no longer run this mission's session (it is stranded): it takes no more messages. Its history stays readable; start a new mission to go on.";

/// Where a mission stands, as the UI shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum MissionStatus {
    Running,
    /// The session waits for the person's next message.
    Waiting,
    /// The turn is held until the person answers a question, an approval or a sign-in.
    #[serde(rename = "needs_input")]
    #[ts(rename = "needs_input")]
    NeedsInput,
    Complete,
    /// The session ended in failure.
    Failed,
    Cancelled,
    Reconnecting,
    /// The service could not be reached for a while; Retry (or the next start) follows again.
    Lost,
    Error,
    /// The service no longer keeps the session's history (eve's `410 session_expired`):
    /// final, never followed again; what this computer stored stays readable.
    Expired,
}

impl MissionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MissionStatus::Running => "running",
            MissionStatus::Waiting => "waiting",
            MissionStatus::NeedsInput => "needs_input",
            MissionStatus::Complete => "complete",
            MissionStatus::Failed => "failed",
            MissionStatus::Cancelled => "cancelled",
            MissionStatus::Reconnecting => "reconnecting",
            MissionStatus::Lost => "lost",
            MissionStatus::Error => "error",
            MissionStatus::Expired => "expired",
        }
    }

    /// Every status, in the order the enum names them.
    pub const ALL: [MissionStatus; 10] = [
        MissionStatus::Running,
        MissionStatus::Waiting,
        MissionStatus::NeedsInput,
        MissionStatus::Complete,
        MissionStatus::Failed,
        MissionStatus::Cancelled,
        MissionStatus::Reconnecting,
        MissionStatus::Lost,
        MissionStatus::Error,
        MissionStatus::Expired,
    ];

    /// A stored status; a name this build does not know reads as an error.
    pub(crate) fn parse(s: &str) -> Self {
        (Self::ALL.into_iter())
            .find(|st| st.as_str() == s)
            .unwrap_or(MissionStatus::Error)
    }

    /// What a status that ended following says, in words every front end shows.
    pub fn explain(self) -> Option<&'static str> {
        match self {
            MissionStatus::Expired => Some(EXPIRED),
            _ => None,
        }
    }

    /// A mission in this state should be followed again after a restart.
    pub fn is_live(self) -> bool {
        matches!(
            self,
            MissionStatus::Running | MissionStatus::Reconnecting | MissionStatus::Lost
        )
    }

    /// The status a record's facts move a mission to. A cancelled turn leaves the
    /// session waiting; it shows as cancelled until the next turn. A record that says
    /// nothing of the lifecycle still shows that the stream is back.
    ///
    /// What a hold that does not say whose it is means is decided from the records
    /// before: here only from the status (a mission waiting on the person has a question
    /// open); [`Self::after_tracked`] with them all.
    pub fn after(self, facts: &[Fact]) -> Self {
        let mut turns = match self {
            MissionStatus::NeedsInput => TurnTracker::assuming_open_question(),
            _ => TurnTracker::default(),
        };
        self.after_tracked(facts, &mut turns)
    }

    /// [`Self::after`], with `turns` folded over every record before these (and moved
    /// on over them): a held turn is the person's only while a question it saw is open,
    /// as the watch decides ([`TurnTracker`]).
    pub fn after_tracked(self, facts: &[Fact], turns: &mut TurnTracker) -> Self {
        let moved = facts.iter().fold(None, |now: Option<Self>, fact| {
            let end = turns.observe(fact);
            let now_or_self = now.unwrap_or(self);
            held_moves(now_or_self, fact, end)
                .or_else(|| fact_moves(fact))
                .or(now)
        });
        match moved {
            Some(status) => status,
            None if matches!(self, MissionStatus::Reconnecting | MissionStatus::Lost) => {
                MissionStatus::Running
            }
            None => self,
        }
    }
}

/// Where a session's wait or a hold moves a mission, from what the tracker decided
/// (`end`): the person's to act, the session's wait, or a turn going on by itself.
fn held_moves(now: MissionStatus, fact: &Fact, end: Option<TurnEnd>) -> Option<MissionStatus> {
    Some(match (fact, end) {
        (Fact::Waiting { .. } | Fact::TurnHeld { .. }, Some(TurnEnd::NeedsInput)) => {
            MissionStatus::NeedsInput
        }
        (Fact::Waiting { .. }, Some(_)) if now == MissionStatus::Cancelled => now,
        (Fact::Waiting { .. }, Some(_)) => MissionStatus::Waiting,
        (Fact::Waiting { .. } | Fact::TurnHeld { .. }, None) => MissionStatus::Running,
        _ => return None,
    })
}

/// The status one fact moves a mission in `now` to; `None` for a fact that does not.
fn fact_moves(fact: &Fact) -> Option<MissionStatus> {
    Some(match fact {
        Fact::TurnStarted | Fact::TurnResumed | Fact::RequestSettled { .. } => {
            MissionStatus::Running
        }
        Fact::RequestOpened(_) => MissionStatus::NeedsInput,
        Fact::ResponseSettled { outcome, .. } if *outcome != ResponseOutcome::Applied => {
            MissionStatus::NeedsInput
        }
        // A sign-in carried by an interaction holds the turn; eve 26's goes on by itself
        // once the browser's callback arrives.
        Fact::SignInOpened {
            interaction: Some(_),
            ..
        } => MissionStatus::NeedsInput,
        Fact::TurnEnded { outcome, .. } if *outcome == TurnOutcome::Cancelled => {
            MissionStatus::Cancelled
        }
        Fact::TurnEnded {
            session_waits: true,
            ..
        } => MissionStatus::Waiting,
        Fact::SessionEnded { failed: true, .. } => MissionStatus::Failed,
        Fact::SessionEnded { failed: false, .. } => MissionStatus::Complete,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::missions::protocol::{self, MissionEvent};

    #[test]
    fn a_status_is_spelled_the_same_on_disk_and_to_the_front_ends() {
        for st in MissionStatus::ALL {
            assert_eq!(serde_json::to_value(st).unwrap(), st.as_str());
            assert_eq!(MissionStatus::parse(st.as_str()), st);
        }
    }

    #[test]
    fn eve_records_move_the_status_to_needs_input_waiting_failed_and_complete() {
        let ev =
            |name: &str, data: &str| protocol::read(&MissionEvent::new(None, name.into(), data));
        let s = MissionStatus::Running;
        let s = s.after(&ev(
            "input.requested",
            r#"{"requests":[{"requestId":"r1","prompt":"Which years?"}]}"#,
        ));
        assert_eq!(s, MissionStatus::NeedsInput);
        // eve before 0.70 parks a question's turn at session.waiting.
        assert_eq!(
            s.after(&ev("session.waiting", "{}")),
            MissionStatus::NeedsInput
        );
        assert_eq!(
            s.after(&ev(
                "input.resolved",
                r#"{"resolutions":[{"requestId":"r1"}]}"#
            )),
            MissionStatus::Running
        );
        use MissionStatus::{Cancelled, Complete, Failed, NeedsInput, Running, Waiting};
        // (from, record, its data, to)
        for (from, name, data, want) in [
            (Running, "turn.waiting", r#"{"on":"input"}"#, NeedsInput),
            (Running, "turn.waiting", r#"{"on":"tasks"}"#, Running),
            // Before 0.70 a hold with no `on`: the person's only with a question open.
            (Running, "turn.waiting", "{}", Running),
            (s, "turn.waiting", "{}", NeedsInput),
            (Running, "session.failed", "{}", Failed),
            (Running, "turn.paused", "{}", NeedsInput),
            (
                Running,
                "turn.settled",
                r#"{"outcome":"completed"}"#,
                Waiting,
            ),
            (
                Running,
                "turn.settled",
                r#"{"outcome":"cancelled"}"#,
                Cancelled,
            ),
            (
                Running,
                "session.ended",
                r#"{"outcome":"completed"}"#,
                Complete,
            ),
            (Running, "session.ended", r#"{"outcome":"failed"}"#, Failed),
        ] {
            assert_eq!(
                from.after(&ev(name, data)),
                want,
                "{from:?} + {name} {data}"
            );
        }
    }

    /// The fold over a whole recorded stream agrees with the watch: a hold on
    /// background tasks (in each of eve B's shapes) shows running, never waiting on the
    /// person; a hold on a question shows needs_input at the record where the watch ends.
    #[test]
    fn held_turns_of_older_servers_fold_as_the_watch_decides() {
        let fold = |records: &[(&str, &str)]| {
            let mut turns = TurnTracker::default();
            records
                .iter()
                .scan(MissionStatus::Running, |st, (name, data)| {
                    let e = MissionEvent::new(None, (*name).into(), data);
                    *st = st.after_tracked(&protocol::read(&e), &mut turns);
                    Some(*st)
                })
                .collect::<Vec<_>>()
        };
        let start = ("turn.started", r#"{"turnId":"t1"}"#);
        let task = ("task.started", r#"{"taskId":"k1","name":"crawl"}"#);
        let question = (
            "input.requested",
            r#"{"requests":[{"requestId":"q1","prompt":"Which years?"}]}"#,
        );
        let waiting = ("session.waiting", "{}");
        use MissionStatus::{NeedsInput, Running};
        for hold in [
            vec![("turn.waiting", "{}")],
            vec![("turn.completed", r#"{"held":true}"#), waiting],
            vec![waiting],
        ] {
            let mut s = vec![start, task];
            s.extend(hold.iter().copied());
            let got = fold(&s);
            assert!(got.iter().all(|st| *st == Running), "{hold:?}: {got:?}");
            let mut s = vec![start, question];
            s.extend(hold.iter().copied());
            let got = fold(&s);
            assert_eq!(*got.last().unwrap(), NeedsInput, "{hold:?}: {got:?}");
        }
    }
}
