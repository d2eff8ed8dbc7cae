//! The outcomes the services name, one closed set per family as eve's own catalog has them
//! (`packages/eve/src/protocol/session-events/catalog.ts`), with the names eve B and the
//! seeds use beside them. A name this build does not know is kept as `Other`, as the server
//! said it. Read once here; everything past `protocol/` matches these values, never names.

/// A closed set of wire names, each a variant, and `Other` for a newer server's.
macro_rules! outcomes {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $wire:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)+
            /// A name this build does not know, as the server said it.
            Other(String),
        }

        impl $name {
            pub fn from_wire(name: &str) -> Self {
                match name {
                    $($wire => Self::$variant,)+
                    other => Self::Other(other.to_owned()),
                }
            }

            /// The name as the server says it.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $wire,)+
                    Self::Other(name) => name,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

outcomes!(
    /// How a turn ended (27's `turn.settled`, B's `turn.completed` / `turn.failed`, the
    /// seeds' `turn.cancelled`).
    TurnOutcome {
        Completed = "completed",
        Cancelled = "cancelled",
        Failed = "failed",
    }
);

outcomes!(
    /// How a call or a task settled.
    WorkOutcome {
        Completed = "completed",
        Failed = "failed",
        Error = "error",
        /// Stopped to ask for a sign-in: it may run again once the turn resumes.
        Interrupted = "interrupted",
        Rejected = "rejected",
        Denied = "denied",
        Cancelled = "cancelled",
        Abandoned = "abandoned",
    }
);

outcomes!(
    /// What became of an answer the service took (27's `response.settled`).
    ResponseOutcome {
        Applied = "applied",
        Refused = "refused",
        Rejected = "rejected",
        Withdrawn = "withdrawn",
        Expired = "expired",
        Abandoned = "abandoned",
    }
);

outcomes!(
    /// How a question or an approval ended: 27's closed set, B's names, and `cancelled`
    /// with its turn.
    RequestOutcome {
        Accepted = "accepted",
        Answered = "answered",
        Approved = "approved",
        Declined = "declined",
        Denied = "denied",
        Rejected = "rejected",
        Withdrawn = "withdrawn",
        /// B: a request the person's message overrode.
        Ignored = "ignored",
        Invalid = "invalid",
        Failed = "failed",
        Interrupted = "interrupted",
        Abandoned = "abandoned",
        Expired = "expired",
        Cancelled = "cancelled",
        /// eve before 0.31 marks no answer: the next turn began from it.
        AnsweredByNextTurn = "answered-by-next-turn",
    }
);

outcomes!(
    /// How a sign-in ended.
    SignInOutcome {
        Authorized = "authorized",
        Accepted = "accepted",
        Declined = "declined",
        Failed = "failed",
        TimedOut = "timed-out",
        Expired = "expired",
        Superseded = "superseded",
        Withdrawn = "withdrawn",
        Cancelled = "cancelled",
        Interrupted = "interrupted",
        Abandoned = "abandoned",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_reads_as_its_value_and_back_and_a_new_one_is_kept_as_said() {
        assert_eq!(TurnOutcome::from_wire("cancelled"), TurnOutcome::Cancelled);
        assert_eq!(WorkOutcome::from_wire("timed-out").as_str(), "timed-out");
        assert_eq!(
            RequestOutcome::from_wire("answered-by-next-turn"),
            RequestOutcome::AnsweredByNextTurn
        );
        for name in ["timed-out", "superseded", "authorized"] {
            assert_eq!(SignInOutcome::from_wire(name).to_string(), name);
        }
        assert_eq!(
            ResponseOutcome::from_wire("deferred"),
            ResponseOutcome::Other("deferred".into())
        );
    }
}
