//! How a request's or a sign-in's end reads, in plain words, the same in the window, `mission
//! show` and the exports: eve 27's closed set of outcomes (`accepted`, `declined`,
//! `invalid`, `failed`, `withdrawn`, `interrupted`, `abandoned`, `expired`), B's own
//! (`answered`, `approved`, `denied`, `ignored`, …), and `cancelled` with its turn.

use crate::missions::conversation::{PendingRequest, SignIn};
use crate::missions::protocol::facts::{
    RequestOutcome, SignInOutcome, is_approval_kind, withdrawn_by_message,
};

impl PendingRequest {
    /// An approval (eve 27's `approval`, B's `tool-approval`).
    pub fn is_approval(&self) -> bool {
        self.approval || is_approval_kind(&self.kind)
    }

    /// How it ended, in plain words; `None` while pending.
    pub fn outcome_words(&self) -> Option<String> {
        use RequestOutcome as R;
        let outcome = RequestOutcome::from_wire(self.outcome.as_deref()?);
        let answer = self.answer.as_deref().map(|a| format!(": {a}"));
        Some(match outcome {
            R::Accepted | R::Answered | R::Approved if self.is_approval() => "Approved".into(),
            R::Accepted | R::Answered | R::Approved => {
                format!("Answered{}", answer.unwrap_or_default())
            }
            R::Declined | R::Denied | R::Rejected => "Declined".into(),
            // B says a request a message overrode was `ignored`.
            R::Ignored => "Withdrawn by your message".into(),
            R::Withdrawn if withdrawn_by_message(self.reason.as_deref()) => {
                "Withdrawn by your message".into()
            }
            R::Withdrawn => "Withdrawn".into(),
            R::Invalid => "Not accepted: the answer was not valid".into(),
            R::Failed => "Failed".into(),
            R::Interrupted => "Interrupted".into(),
            R::Abandoned => "Abandoned: the turn went on without it".into(),
            R::Expired => "Expired before it was answered".into(),
            R::Cancelled => "Cancelled with its turn".into(),
            R::AnsweredByNextTurn => "Answered".into(),
            R::Other(said) => said,
        })
    }
}

impl SignIn {
    /// How it ended, in plain words; `None` while it waits.
    pub fn outcome_words(&self) -> Option<String> {
        use SignInOutcome as S;
        Some(
            match SignInOutcome::from_wire(self.outcome.as_deref()?) {
                S::Authorized | S::Accepted => "Signed in",
                S::Declined => "Sign-in declined",
                S::Failed => "Sign-in failed",
                S::TimedOut | S::Expired => "The sign-in expired",
                S::Superseded => "Replaced by a newer sign-in link",
                S::Withdrawn => "Withdrawn",
                S::Cancelled | S::Interrupted | S::Abandoned => "Cancelled with its turn",
                S::Other(said) => return Some(said),
            }
            .to_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(
        kind: &str,
        outcome: &str,
        reason: Option<&str>,
        answer: Option<&str>,
    ) -> PendingRequest {
        PendingRequest {
            request_id: "r".into(),
            kind: kind.into(),
            approval: is_approval_kind(kind),
            prompt: "?".into(),
            title: None,
            options: Vec::new(),
            allow_freeform: false,
            outcome: Some(outcome.into()),
            reason: reason.map(str::to_owned),
            outcome_text: None,
            answer: answer.map(str::to_owned),
            refusal: None,
        }
    }

    #[test]
    fn each_of_eve_s_outcomes_reads_in_plain_words() {
        let said = |kind, outcome, reason, answer| {
            request(kind, outcome, reason, answer)
                .outcome_words()
                .unwrap()
        };
        assert_eq!(
            said("approval", "accepted", None, Some("Approve")),
            "Approved"
        );
        assert_eq!(said("tool-approval", "approved", None, None), "Approved");
        assert_eq!(
            said("question", "accepted", None, Some("All years")),
            "Answered: All years"
        );
        assert_eq!(
            said("approval", "declined", None, Some("Cancel")),
            "Declined"
        );
        assert_eq!(said("tool-approval", "denied", None, None), "Declined");
        assert_eq!(
            said("approval", "withdrawn", Some("superseded-by-message"), None),
            "Withdrawn by your message"
        );
        assert_eq!(
            said("tool-approval", "ignored", None, None),
            "Withdrawn by your message"
        );
        assert_eq!(said("approval", "withdrawn", None, None), "Withdrawn");
        for (outcome, words) in [
            ("invalid", "Not accepted: the answer was not valid"),
            ("failed", "Failed"),
            ("interrupted", "Interrupted"),
            ("abandoned", "Abandoned: the turn went on without it"),
            ("expired", "Expired before it was answered"),
            ("cancelled", "Cancelled with its turn"),
        ] {
            assert_eq!(said("budget", outcome, None, None), words);
        }
        assert_eq!(
            request("budget", "x", None, None)
                .outcome_words()
                .as_deref(),
            Some("x")
        );
        let mut pending = request("approval", "accepted", None, None);
        pending.outcome = None;
        assert_eq!(pending.outcome_words(), None);
    }
}
