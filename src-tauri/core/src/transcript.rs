//! A mission's transcript as Markdown (for people) and JSON (for programs), as the
//! app exports it. Both list every stored event in order; kinds Casebook does not
//! know keep their raw JSON, so nothing the service sent is lost from an export.

use crate::missions::{EventKind, Payload, format_usd};
use crate::store::{MissionRecord, StoredEvent};
use serde_json::{Value, json};
use std::fmt::Write;
use time::OffsetDateTime;
use time::format_description::BorrowedFormatItem;
use time::macros::format_description;

/// RFC 3339 in UTC with seconds, e.g. `2026-05-01T09:30:00Z`.
pub fn rfc3339(ms: i64) -> String {
    const FORMAT: &[BorrowedFormatItem<'_>] =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(FORMAT).ok())
        // Past year 9999: no reader of an export needs a calendar date for that.
        .unwrap_or_else(|| format!("{ms} ms since 1970"))
}

/// `0.5` → `"$0.50"`; amounts arrive from the service as JSON numbers of dollars.
fn dollars(v: f64) -> String {
    if !v.is_finite() || v < 0.0 {
        return format!("${v}");
    }
    format!("${}", format_usd((v * 100.0).round() as u64))
}

/// Text that must stay on one line of a Markdown list.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A block of text quoted line by line.
fn quote(s: &str) -> String {
    s.lines()
        .map(|l| format!("> {l}").trim_end().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn fenced_json(v: &Value) -> String {
    let pretty = serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
    // A fence longer than any backtick run inside, so the block cannot be closed early.
    let longest = pretty.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}json\n{pretty}\n{fence}")
}

fn link(url: &str) -> String {
    format!("<{}>", url.replace(['<', '>', ' '], ""))
}

/// The body of one event in Markdown: what the app's card shows.
fn event_body(e: &StoredEvent) -> String {
    let ev = &e.event;
    let text = |k: &str| ev.data.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut out = String::new();
    match ev.payload() {
        Some(Payload::TurnStarted(t)) => {
            if let Some(o) = t.objective {
                out.push_str(&quote(&o));
                out.push('\n');
            }
            if let Some(b) = t.budget_usd {
                let _ = writeln!(out, "Budget: {}", dollars(b));
            }
        }
        Some(Payload::Plan(p)) => {
            for (i, s) in p.steps.iter().enumerate() {
                let _ = writeln!(out, "{}. {}", i + 1, one_line(s));
            }
        }
        Some(Payload::SearchQuery(q)) => {
            let _ = write!(
                out,
                "Searched: “{}”",
                one_line(&q.query.unwrap_or_default())
            );
            if let Some(engine) = q.engine {
                let _ = write!(out, " ({engine})");
            }
            out.push('\n');
        }
        Some(Payload::SourceFound(s)) => {
            let title = s.title.unwrap_or_else(|| "Untitled source".into());
            let _ = write!(out, "**{}**", one_line(&title));
            let year = s.year.map(|y| match y {
                Value::String(s) => s,
                other => other.to_string(),
            });
            let meta: Vec<String> = [s.publisher, year].into_iter().flatten().collect();
            if !meta.is_empty() {
                let _ = write!(out, ". {}", meta.join(", "));
            }
            out.push('\n');
            if let Some(url) = s.url {
                let _ = writeln!(out, "{}", link(&url));
            }
        }
        Some(Payload::Evidence(x)) => {
            if let Some(q) = x.quote {
                out.push_str(&quote(&q));
                out.push('\n');
            }
            if let Some(claim) = x.supports {
                let _ = writeln!(out, "Supports: {}", one_line(&claim));
            }
            if let Some(url) = x.source_url {
                let _ = writeln!(out, "Source: {}", link(&url));
            }
        }
        Some(Payload::FindingVerified(f)) => {
            let _ = write!(out, "**{}**", one_line(&f.claim.unwrap_or_default()));
            if let Some(c) = f.confidence {
                let _ = write!(out, " (confidence {:.0}%)", c * 100.0);
            }
            out.push('\n');
            for url in f.sources {
                let _ = writeln!(out, "- {}", link(&url));
            }
        }
        Some(Payload::SpendUpdated(s)) => {
            let spent = s.spent_usd.map(dollars).unwrap_or_else(|| "?".into());
            match s.budget_usd {
                Some(b) => {
                    let _ = writeln!(out, "Spent {spent} of {}", dollars(b));
                }
                None => {
                    let _ = writeln!(out, "Spent {spent}");
                }
            }
        }
        Some(Payload::ReportFinal(r)) => {
            if let Some(t) = r.title {
                let _ = writeln!(out, "**{}**\n", one_line(&t));
            }
            if let Some(s) = r.summary {
                let _ = writeln!(out, "{}\n", s.trim());
            }
            for f in r.findings {
                let _ = writeln!(out, "- {}", one_line(&f));
            }
        }
        None => match ev.kind {
            EventKind::TurnCancelled => {
                let _ = writeln!(
                    out,
                    "The turn was cancelled{}.",
                    text("reason")
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default()
                );
            }
            EventKind::SessionWaiting => {
                let _ = writeln!(
                    out,
                    "The session is waiting{}.",
                    text("reason")
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default()
                );
            }
            EventKind::SessionCompleted => {
                let _ = writeln!(out, "The mission is complete.");
            }
            EventKind::TurnCompleted => {
                let _ = writeln!(out, "The turn is complete.");
            }
            // Unknown kinds, and known kinds whose data has another shape: the raw JSON.
            _ => {
                out.push_str(&fenced_json(&ev.data));
                out.push('\n');
            }
        },
    }
    out
}

/// The whole transcript in Markdown.
pub fn markdown(m: &MissionRecord, events: &[StoredEvent]) -> String {
    let mut out = String::new();
    let headline = m.objective.lines().next().unwrap_or("").trim();
    let _ = writeln!(out, "# Mission: {}\n", one_line(headline));
    let _ = writeln!(out, "- Session: `{}`", m.session_id);
    let _ = writeln!(out, "- Status: {}", m.status.as_str());
    let _ = writeln!(out, "- Started: {}", rfc3339(m.created_at));
    let _ = writeln!(
        out,
        "- Mission type: {}; budget type: {}; budget (hard maximum): ${} USD",
        m.mission_type,
        m.budget_type,
        format_usd(m.budget_cents)
    );
    let _ = writeln!(out, "- Service: {}", m.base_url);
    let _ = writeln!(out, "- Events: {}\n", events.len());
    let _ = writeln!(out, "## Objective\n\n{}\n", m.objective.trim());
    let _ = writeln!(out, "## Timeline");
    for e in events {
        let id = e
            .event
            .id
            .as_deref()
            .map(|i| format!(" (id {i})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "\n### {}. {}{id}, {}\n",
            e.seq,
            e.event.event,
            rfc3339(e.received_at)
        );
        out.push_str(&event_body(e));
    }
    out
}

/// The whole transcript as JSON: the mission and every event with its raw data.
pub fn json(m: &MissionRecord, events: &[StoredEvent]) -> Value {
    json!({
        "mission": {
            "sessionId": m.session_id,
            "objective": m.objective,
            "missionType": m.mission_type,
            "budgetType": m.budget_type,
            "budgetCents": m.budget_cents,
            "baseUrl": m.base_url,
            "status": m.status,
            "createdAt": rfc3339(m.created_at),
            "updatedAt": rfc3339(m.updated_at),
            "lastEventId": m.last_event_id,
        },
        "events": events.iter().map(|e| json!({
            "seq": e.seq,
            "id": e.event.id,
            "event": e.event.event,
            "receivedAt": rfc3339(e.received_at),
            "data": e.event.data,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::missions::MissionEvent;
    use crate::store::MissionStatus;

    fn record() -> MissionRecord {
        MissionRecord {
            session_id: "ses_1".into(),
            objective: "Does urban heat raise admissions?\nLook at cohort studies.".into(),
            mission_type: "research".into(),
            budget_type: "fixed".into(),
            budget_cents: 2550,
            base_url: "http://127.0.0.1:9".into(),
            status: MissionStatus::Complete,
            created_at: 1_777_627_800_000,
            updated_at: 1_777_627_860_000,
            last_event_id: Some("3".into()),
            event_count: 3,
            continuation_token: Some("ct_secret".into()),
        }
    }

    fn stored(seq: u64, name: &str, data: &str) -> StoredEvent {
        StoredEvent {
            seq,
            event: MissionEvent::new(Some(seq.to_string()), name.into(), data),
            received_at: 1_777_627_801_000 + seq as i64 * 1000,
        }
    }

    fn events() -> Vec<StoredEvent> {
        vec![
            stored(1, "plan", r#"{"steps":["Search","Read\nclosely"]}"#),
            stored(
                2,
                "source.found",
                r#"{"title":"Heat and health","url":"https://doi.org/10.1/x","publisher":"Lancet","year":2021}"#,
            ),
            stored(
                3,
                "finding.verified",
                r#"{"claim":"Heat raises admissions","confidence":0.82,"sources":["https://doi.org/10.1/x"]}"#,
            ),
            stored(4, "spend.updated", r#"{"spentUsd":1.5,"budgetUsd":25.5}"#),
            stored(5, "weather.report", r#"{"sky":"```grey"}"#),
            stored(
                6,
                "report.final",
                r#"{"title":"Heat","summary":"It does.","findings":["A","B"]}"#,
            ),
            stored(7, "turn.cancelled", r#"{"reason":"user"}"#),
            stored(8, "session.waiting", r#"{"reason":"cancelled"}"#),
        ]
    }

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_777_627_800_999), "2026-05-01T09:30:00Z");
    }

    #[test]
    fn markdown_renders_each_kind_and_keeps_unknown_json() {
        let md = markdown(&record(), &events());
        for want in [
            "# Mission: Does urban heat raise admissions?\n",
            "- Session: `ses_1`\n",
            "- Status: complete\n",
            "- Started: 2026-05-01T09:30:00Z\n",
            "budget (hard maximum): $25.50 USD\n",
            "## Objective\n\nDoes urban heat raise admissions?\nLook at cohort studies.\n",
            "### 1. plan (id 1), 2026-05-01T09:30:02Z\n\n1. Search\n2. Read closely\n",
            "**Heat and health**. Lancet, 2021\n<https://doi.org/10.1/x>\n",
            "**Heat raises admissions** (confidence 82%)\n- <https://doi.org/10.1/x>\n",
            "Spent $1.50 of $25.50\n",
            "### 5. weather.report (id 5)",
            "````json\n{\n  \"sky\": \"```grey\"\n}\n````\n",
            "**Heat**\n\nIt does.\n\n- A\n- B\n",
            "The turn was cancelled (user).\n",
            "The session is waiting (cancelled).\n",
        ] {
            assert!(md.contains(want), "missing {want:?} in:\n{md}");
        }
        assert!(
            !md.contains("ct_secret"),
            "the continuation token stays out"
        );
    }

    #[test]
    fn json_has_the_mission_and_every_event_raw() {
        let v = json(&record(), &events());
        assert_eq!(v["mission"]["sessionId"], "ses_1");
        assert_eq!(v["mission"]["status"], "complete");
        assert_eq!(v["mission"]["budgetCents"], 2550);
        assert_eq!(v["mission"]["createdAt"], "2026-05-01T09:30:00Z");
        let evs = v["events"].as_array().unwrap();
        assert_eq!(evs.len(), 8);
        assert_eq!(evs[4]["event"], "weather.report");
        assert_eq!(evs[4]["data"]["sky"], "```grey");
        assert_eq!(evs[0]["id"], "1");
        assert!(!v.to_string().contains("ct_secret"));
    }
}
