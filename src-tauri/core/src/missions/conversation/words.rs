//! How a request's or a sign-in's end reads, in plain words, the same in the window, `mission
//! show` and the exports: eve 27's closed set of outcomes (`accepted`, `declined`,
//! `invalid`, `failed`, `withdrawn`, `interrupted`, `abandoned`, `expired`), B's own
//! (`answered`, `approved`, `denied`, `ignored`, …), and `cancelled` with its turn.

use crate::missions::conversation::{PendingRequest, SignIn};

/// The reason eve gives when the person's message withdrew a request.
const BY_MESSAGE: &str = "superseded-by-message";

impl PendingRequest {
    /// An approval (eve 27's `approval`, B's `tool-approval`).
    pub fn is_approval(&self) -> bool {
        matches!(self.kind.as_str(), "approval" | "tool-approval")
    }

    /// How it ended, in plain words; `None` while pending.
    pub fn outcome_words(&self) -> Option<String> {
        let outcome = self.outcome.as_deref()?;
        let answer = self.answer.as_deref().map(|a| format!(": {a}"));
        Some(match outcome {
            "accepted" | "answered" | "approved" if self.is_approval() => "Approved".into(),
            "accepted" | "answered" | "approved" => {
                format!("Answered{}", answer.unwrap_or_default())
            }
            "declined" | "denied" | "rejected" => "Declined".into(),
            // B says a request a message overrode was `ignored`.
            "withdrawn" | "ignored"
                if outcome == "ignored" || self.reason.as_deref() == Some(BY_MESSAGE) =>
            {
                "Withdrawn by your message".into()
            }
            "withdrawn" => "Withdrawn".into(),
            "invalid" => "Not accepted: the answer was not valid".into(),
            "failed" => "Failed".into(),
            "interrupted" => "Interrupted".into(),
            "abandoned" => "Abandoned: the turn went on without it".into(),
            "expired" => "Expired before it was answered".into(),
            "cancelled" => "Cancelled with its turn".into(),
            // eve before 0.31 marks no answer: the next turn began from it.
            "answered-by-next-turn" => "Answered".into(),
            other => other.to_owned(),
        })
    }
}

impl SignIn {
    /// How it ended, in plain words; `None` while it waits.
    pub fn outcome_words(&self) -> Option<String> {
        Some(
            match self.outcome.as_deref()? {
                "authorized" | "accepted" => "Signed in",
                "declined" => "Sign-in declined",
                "failed" => "Sign-in failed",
                "timed-out" | "expired" => "The sign-in expired",
                "superseded" => "Replaced by a newer sign-in link",
                "withdrawn" => "Withdrawn",
                "cancelled" | "interrupted" | "abandoned" => "Cancelled with its turn",
                other => return Some(other.to_owned()),
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
