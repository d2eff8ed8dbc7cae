//! How one mission event reads, decided once for every front end: the mission
//! window's cards, the Markdown transcript and the CLI's lines all render a [`Card`].
//!
//! Only the event's own data is used, tolerantly: a known kind whose data has
//! another shape becomes a `Raw` card (its JSON), and data that is not JSON at all
//! (a multi-line draft, say) becomes a `Text` card with its lines, never a JSON
//! string with literal `\n`.

use crate::missions::protocol::{EventKind, MissionEvent, Payload};
use crate::missions::spend::dollars;
use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

/// What a card shows for one event.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum Card {
    Started {
        objective: Option<String>,
        budget: Option<String>,
    },
    Plan {
        steps: Vec<String>,
    },
    Search {
        query: String,
        engine: Option<String>,
    },
    Source {
        title: String,
        url: Option<String>,
        publisher: Option<String>,
        year: Option<String>,
    },
    Evidence {
        quote: Option<String>,
        supports: Option<String>,
        url: Option<String>,
    },
    Finding {
        claim: String,
        confidence: Option<String>,
        sources: Vec<String>,
    },
    Spend {
        text: String,
    },
    Report {
        title: Option<String>,
        summary: Option<String>,
        findings: Vec<String>,
    },
    /// A one-line status (turn completed, cancelled, waiting, complete).
    Note {
        text: String,
    },
    /// Data that is not JSON: shown as text, line by line.
    Text {
        text: String,
    },
    /// A kind Casebook does not know, or a known kind with data of another shape.
    Raw {
        json: String,
    },
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// The heading of an event's card: a readable name for the kinds Casebook knows,
/// the event's own name otherwise.
pub fn label(event: &str) -> String {
    match EventKind::of(event) {
        EventKind::TurnStarted => "Turn started",
        EventKind::Plan => "Plan",
        EventKind::SearchQuery => "Search",
        EventKind::SourceFound => "Source",
        EventKind::Evidence => "Evidence",
        EventKind::FindingVerified => "Finding verified",
        EventKind::SpendUpdated => "Spend",
        EventKind::ReportFinal => "Report",
        EventKind::TurnCompleted => "Turn completed",
        EventKind::TurnCancelled => "Turn cancelled",
        EventKind::SessionWaiting => "Session waiting",
        EventKind::SessionCompleted => "Session complete",
        EventKind::Unknown => return event.to_owned(),
    }
    .to_owned()
}

/// How `event` reads. Never fails: anything unexpected becomes `Raw` or `Text`.
pub fn card(event: &MissionEvent) -> Card {
    let data = &event.data;
    if let Value::String(s) = data {
        return Card::Text { text: s.clone() };
    }
    let raw = || Card::Raw { json: pretty(data) };
    let reason = || {
        data.get("reason")
            .and_then(Value::as_str)
            .map(|r| format!(" ({r})"))
            .unwrap_or_default()
    };
    let Some(payload) = event.payload() else {
        return match event.kind {
            EventKind::TurnCompleted => Card::Note {
                text: "The turn is complete.".into(),
            },
            EventKind::TurnCancelled => Card::Note {
                text: format!("The turn was cancelled{}.", reason()),
            },
            EventKind::SessionWaiting
                if data.get("reason").and_then(Value::as_str) == Some("awaiting_input") =>
            {
                Card::Note {
                    text: "Waiting for your input.".into(),
                }
            }
            EventKind::SessionWaiting => Card::Note {
                text: format!("Waiting{}.", reason()),
            },
            EventKind::SessionCompleted => Card::Note {
                text: match data.get("reportTitle").and_then(Value::as_str) {
                    Some(t) => format!("Mission complete: {t}"),
                    None => "Mission complete.".into(),
                },
            },
            _ => raw(),
        };
    };
    match payload {
        Payload::TurnStarted(t) => Card::Started {
            objective: t.objective,
            budget: t.budget_usd.map(dollars),
        },
        Payload::Plan(p) if !p.steps.is_empty() => Card::Plan { steps: p.steps },
        Payload::SearchQuery(q) => match q.query {
            Some(query) => Card::Search {
                query,
                engine: q.engine,
            },
            None => raw(),
        },
        Payload::SourceFound(s) => match (s.title, s.url) {
            (None, None) => raw(),
            (title, url) => Card::Source {
                title: title.or_else(|| url.clone()).unwrap_or_default(),
                url,
                publisher: s.publisher,
                year: s.year.map(|y| match y {
                    Value::String(s) => s,
                    other => other.to_string(),
                }),
            },
        },
        Payload::Evidence(e) if e.quote.is_some() || e.supports.is_some() => Card::Evidence {
            quote: e.quote,
            supports: e.supports,
            url: e.source_url,
        },
        Payload::FindingVerified(f) => match f.claim {
            Some(claim) => Card::Finding {
                claim,
                confidence: f.confidence.map(|c| format!("{:.0}%", c * 100.0)),
                sources: f.sources,
            },
            None => raw(),
        },
        Payload::SpendUpdated(s) => match (s.spent_usd, s.budget_usd) {
            (None, _) => raw(),
            (Some(spent), None) => Card::Spend {
                text: dollars(spent),
            },
            (Some(spent), Some(budget)) => Card::Spend {
                text: format!("{} of {}", dollars(spent), dollars(budget)),
            },
        },
        Payload::ReportFinal(r) if r.title.is_some() || r.summary.is_some() => Card::Report {
            title: r.title,
            summary: r.summary,
            findings: r.findings,
        },
        _ => raw(),
    }
}

/// Text that must stay on one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Card {
    /// The card on one line, for the CLI.
    pub fn line(&self) -> String {
        match self {
            Card::Started { objective, budget } => {
                let mut s = one_line(objective.as_deref().unwrap_or(""));
                if let Some(b) = budget {
                    s.push_str(&format!(" (budget {b})"));
                }
                s
            }
            Card::Plan { steps } => steps
                .iter()
                .map(|s| one_line(s))
                .collect::<Vec<_>>()
                .join(" → "),
            Card::Search { query, engine } => match engine {
                Some(e) => format!("“{}” on {e}", one_line(query)),
                None => format!("“{}”", one_line(query)),
            },
            Card::Source { title, url, .. } => match url {
                Some(u) if u != title => format!("{} <{u}>", one_line(title)),
                _ => one_line(title),
            },
            Card::Evidence {
                quote, supports, ..
            } => match (quote, supports) {
                (Some(q), _) => format!("“{}”", one_line(q)),
                (None, Some(s)) => format!("supports: {}", one_line(s)),
                (None, None) => String::new(),
            },
            Card::Finding {
                claim, confidence, ..
            } => match confidence {
                Some(c) => format!("{} ({c})", one_line(claim)),
                None => one_line(claim),
            },
            Card::Spend { text } | Card::Note { text } => text.clone(),
            Card::Report { title, summary, .. } => {
                one_line(title.as_deref().or(summary.as_deref()).unwrap_or(""))
            }
            Card::Text { text } => one_line(text),
            Card::Raw { json } => {
                serde_json::from_str::<Value>(json).map_or_else(|_| json.clone(), |v| v.to_string())
            }
        }
    }

    /// The card as Markdown, for the transcript.
    pub fn markdown(&self) -> String {
        let quote = |s: &str| {
            s.lines()
                .map(|l| format!("> {l}").trim_end().to_owned())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let link = |u: &str| format!("<{}>", u.replace(['<', '>', ' '], ""));
        let mut out = Vec::new();
        match self {
            Card::Started { objective, budget } => {
                out.extend(objective.as_deref().map(quote));
                out.extend(budget.as_ref().map(|b| format!("Budget: {b}")));
            }
            Card::Plan { steps } => out.extend(
                steps
                    .iter()
                    .enumerate()
                    .map(|(i, s)| format!("{}. {}", i + 1, one_line(s))),
            ),
            Card::Search { query, engine } => out.push(match engine {
                Some(e) => format!("Searched: “{}” ({e})", one_line(query)),
                None => format!("Searched: “{}”", one_line(query)),
            }),
            Card::Source {
                title,
                url,
                publisher,
                year,
            } => {
                let meta: Vec<&str> = [publisher.as_deref(), year.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect();
                out.push(if meta.is_empty() {
                    format!("**{}**", one_line(title))
                } else {
                    format!("**{}**. {}", one_line(title), meta.join(", "))
                });
                out.extend(url.as_deref().map(link));
            }
            Card::Evidence {
                quote: q,
                supports,
                url,
            } => {
                out.extend(q.as_deref().map(quote));
                out.extend(
                    supports
                        .as_ref()
                        .map(|s| format!("Supports: {}", one_line(s))),
                );
                out.extend(url.as_ref().map(|u| format!("Source: {}", link(u))));
            }
            Card::Finding {
                claim,
                confidence,
                sources,
            } => {
                out.push(match confidence {
                    Some(c) => format!("**{}** (confidence {c})", one_line(claim)),
                    None => format!("**{}**", one_line(claim)),
                });
                out.extend(sources.iter().map(|u| format!("- {}", link(u))));
            }
            Card::Spend { text } => out.push(format!("Spent {text}")),
            Card::Report {
                title,
                summary,
                findings,
            } => {
                out.extend(title.as_ref().map(|t| format!("**{}**\n", one_line(t))));
                out.extend(summary.as_ref().map(|s| format!("{}\n", s.trim())));
                out.extend(findings.iter().map(|f| format!("- {}", one_line(f))));
            }
            Card::Note { text } => out.push(text.clone()),
            Card::Text { text } => out.push(fenced(text, "text")),
            Card::Raw { json } => out.push(fenced(json, "json")),
        }
        let mut s = out.join("\n");
        s.push('\n');
        s
    }
}

/// A fenced block longer than any backtick run inside, so it cannot be closed early.
fn fenced(body: &str, lang: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{body}\n{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &str, data: &str) -> MissionEvent {
        MissionEvent::new(Some("1".into()), name.into(), data)
    }

    #[test]
    fn known_kinds_read_as_their_cards() {
        assert_eq!(
            card(&ev("spend.updated", r#"{"spentUsd":1.5,"budgetUsd":25}"#)),
            Card::Spend {
                text: "$1.50 of $25.00".into()
            }
        );
        assert_eq!(
            card(&ev("finding.verified", r#"{"claim":"C","confidence":0.8}"#)).line(),
            "C (80%)"
        );
        assert_eq!(
            card(&ev("plan", r#"{"steps":["a","b"]}"#)).markdown(),
            "1. a\n2. b\n"
        );
        assert_eq!(label("search.query"), "Search");
        assert_eq!(label("weather.report"), "weather.report");
    }

    #[test]
    fn other_shapes_and_unknown_kinds_keep_their_json() {
        let c = card(&ev("plan", r#"{"todo":["x"]}"#));
        assert!(
            matches!(&c, Card::Raw { json } if json.contains("\"todo\"")),
            "{c:?}"
        );
        let c = card(&ev("weather.report", r#"{"sky":"grey"}"#));
        assert!(matches!(&c, Card::Raw { json } if json.contains("grey")));
        assert!(c.markdown().starts_with("```json\n"));
    }

    /// A text draft keeps its lines in the window, the transcript and the CLI.
    #[test]
    fn text_data_reads_as_text_with_its_lines() {
        let e = ev("draft", "First line\nSecond line");
        let c = card(&e);
        assert_eq!(
            c,
            Card::Text {
                text: "First line\nSecond line".into()
            }
        );
        assert!(c.markdown().contains("First line\nSecond line"), "{c:?}");
        assert!(!c.markdown().contains("\\n"));
        assert_eq!(c.line(), "First line Second line");
    }

    #[test]
    fn statuses_read_as_notes() {
        assert_eq!(
            card(&ev("turn.cancelled", r#"{"reason":"user"}"#)).line(),
            "The turn was cancelled (user)."
        );
        assert_eq!(
            card(&ev("session.waiting", r#"{"reason":"awaiting_input"}"#)).line(),
            "Waiting for your input."
        );
    }
}
