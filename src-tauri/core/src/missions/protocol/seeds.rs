//! The seeds' own vocabulary (`../shared/seeds/001_…`): the SSE dialect's event kinds,
//! typed, and what each record of it says as facts.

use crate::missions::protocol::MissionEvent;
use crate::missions::protocol::facts::Fact;
use crate::missions::protocol::json::{each, owned, text, total_spent};
use crate::missions::protocol::outcomes::TurnOutcome;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// What a record of the seeds' dialect says; `None` for a name it does not have.
pub fn read(e: &MissionEvent) -> Option<Vec<Fact>> {
    let d = &e.data;
    let s = |k: &str| text(d, k);
    let strings = |k: &str| {
        each(d, k)
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let kind = EventKind::of(&e.event);
    let fact = match kind {
        EventKind::TurnStarted => Some(Fact::TurnStarted),
        EventKind::TurnCompleted | EventKind::TurnCancelled => Some(Fact::TurnEnded {
            outcome: if kind == EventKind::TurnCancelled {
                TurnOutcome::Cancelled
            } else {
                TurnOutcome::Completed
            },
            error: None,
            session_waits: false,
            // eve B (one of its versions) holds a turn on its background tasks so.
            held: kind == EventKind::TurnCompleted && d.get("held") == Some(&Value::Bool(true)),
        }),
        EventKind::SessionWaiting => Some(Fact::Waiting {
            continuation_token: s("continuationToken")
                .filter(|t| !t.is_empty())
                .map(str::to_owned),
        }),
        EventKind::SessionCompleted => Some(Fact::SessionEnded {
            failed: false,
            error: None,
        }),
        EventKind::Plan => {
            let steps = strings("steps");
            (!steps.is_empty()).then_some(Fact::Plan { steps })
        }
        EventKind::SearchQuery => s("query").map(|query| Fact::Searched {
            query: query.to_owned(),
            engine: owned(d, "engine"),
        }),
        EventKind::SourceFound => s("url").map(|url| Fact::SourceFound {
            url: url.to_owned(),
            title: owned(d, "title"),
        }),
        EventKind::Evidence => s("quote").map(|quote| Fact::Evidence {
            quote: quote.to_owned(),
            source_url: owned(d, "sourceUrl"),
        }),
        EventKind::FindingVerified => s("claim").map(|claim| Fact::FindingVerified {
            claim: claim.to_owned(),
        }),
        EventKind::SpendUpdated => d
            .get("spentUsd")
            .and_then(Value::as_f64)
            .map(|usd| Fact::SpendReported { usd }),
        EventKind::ReportFinal => Some(Fact::Report {
            title: owned(d, "title"),
            summary: owned(d, "summary"),
            findings: strings("findings"),
        }),
        EventKind::Unknown => return None,
    };
    let mut facts: Vec<Fact> = fact.into_iter().collect();
    // eve B puts its cumulative spend on the session's wait and end, names it shares
    // with the seeds.
    if matches!(
        kind,
        EventKind::SessionWaiting | EventKind::SessionCompleted
    ) {
        facts.extend(total_spent(d));
    }
    Some(facts)
}

/// The kinds of event Casebook knows; anything else is `Unknown` and is shown with
/// its name and raw JSON, never dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename_all = "snake_case")]
pub enum EventKind {
    TurnStarted,
    Plan,
    SearchQuery,
    SourceFound,
    Evidence,
    FindingVerified,
    SpendUpdated,
    ReportFinal,
    TurnCompleted,
    TurnCancelled,
    SessionWaiting,
    SessionCompleted,
    Unknown,
}

impl EventKind {
    pub fn of(event: &str) -> Self {
        match event {
            "turn.started" => EventKind::TurnStarted,
            "plan" => EventKind::Plan,
            "search.query" => EventKind::SearchQuery,
            "source.found" => EventKind::SourceFound,
            "evidence" => EventKind::Evidence,
            "finding.verified" => EventKind::FindingVerified,
            "spend.updated" => EventKind::SpendUpdated,
            "report.final" => EventKind::ReportFinal,
            "turn.completed" => EventKind::TurnCompleted,
            "turn.cancelled" => EventKind::TurnCancelled,
            "session.waiting" => EventKind::SessionWaiting,
            // The contract does not name the completion event; accept the likely spellings.
            "session.completed" | "session.complete" | "session.done" => {
                EventKind::SessionCompleted
            }
            _ => EventKind::Unknown,
        }
    }
}

/// Typed payloads of the kinds the sandbox sends (docs/contract.md). Every field
/// is optional: a real server may send less.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    TurnStarted(TurnStarted),
    Plan(Plan),
    SearchQuery(SearchQuery),
    SourceFound(SourceFound),
    Evidence(Evidence),
    FindingVerified(FindingVerified),
    SpendUpdated(SpendUpdated),
    ReportFinal(ReportFinal),
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TurnStarted {
    pub turn_id: Option<String>,
    pub objective: Option<String>,
    pub budget_usd: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Plan {
    pub steps: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SearchQuery {
    pub query: Option<String>,
    pub engine: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SourceFound {
    pub title: Option<String>,
    pub url: Option<String>,
    pub publisher: Option<String>,
    pub year: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Evidence {
    pub source_url: Option<String>,
    pub quote: Option<String>,
    pub supports: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FindingVerified {
    pub claim: Option<String>,
    pub confidence: Option<f64>,
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SpendUpdated {
    pub spent_usd: Option<f64>,
    pub budget_usd: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ReportFinal {
    pub title: Option<String>,
    pub summary: Option<String>,
    pub findings: Vec<String>,
}
