//! A mission's transcript as Markdown (for people) and JSON (for programs), as the
//! app and the CLI export it. Both list every stored event in order; kinds Casebook does not
//! know keep their raw JSON, so nothing the service sent is lost from an export.

use crate::error::{Error, ErrorCode, Result};
use crate::missions::conversation::{Conversation, ItemKind};
use crate::missions::export::report_docx::{self, ReportDoc};
use crate::missions::spend::{dollars, format_usd};
use crate::missions::store::{MissionRecord, MissionStore, StoredEvent, rfc3339};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt::Write;

/// Text that must stay on one line of a Markdown heading or list.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
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
    let conversation = Conversation::from_events(events.iter().map(|e| &e.event));
    conversation_markdown(&mut out, &conversation);
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
        out.push_str(&e.card.markdown());
    }
    out
}

/// A message's files, one a line: the name escaped so it stays text, the link only when
/// the file has an http(s) one.
fn files_markdown(out: &mut String, files: &[crate::missions::conversation::FileRef]) {
    if files.is_empty() {
        return;
    }
    for f in files {
        let name: String = f
            .name
            .chars()
            .flat_map(|c| {
                let escape = "\\`*_{}[]()<>#+-.!|~".contains(c);
                escape.then_some('\\').into_iter().chain(std::iter::once(c))
            })
            .collect();
        let mut line = format!("- File: {name} ({}", f.media_type);
        if let Some(size) = f.size {
            let _ = write!(
                line,
                ", {}",
                crate::missions::protocol::facts::readable_size(size)
            );
        }
        line.push(')');
        if let Some(url) = &f.url {
            let _ = write!(line, " <{url}>");
        }
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
}

/// The conversation as people read it: messages, steps with their sources, questions
/// with their answers, failures, then every source once.
fn conversation_markdown(out: &mut String, c: &Conversation) {
    if c.items.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Conversation\n");
    if let Some(spent) = c.spent_usd() {
        let _ = writeln!(out, "Spent {}.\n", dollars(spent));
    }
    for item in &c.items {
        match item.kind {
            ItemKind::User => {
                let _ = writeln!(out, "**You:**\n\n{}\n", item.text.trim());
                files_markdown(out, &item.files);
            }
            ItemKind::Assistant if item.narration => {
                let _ = writeln!(out, "*{}*\n", one_line(&item.text));
            }
            ItemKind::Assistant => {
                let _ = writeln!(out, "**Agent:**\n\n{}\n", item.text.trim());
                files_markdown(out, &item.files);
            }
            ItemKind::Tool => {
                let _ = writeln!(out, "- {}", one_line(&item.text));
                if let Some(step) = &item.step {
                    if let Some(e) = &step.error {
                        let _ = writeln!(out, "  - failed: {}", one_line(e));
                    }
                    for s in &step.sources {
                        let title = s
                            .title
                            .as_deref()
                            .map(one_line)
                            .unwrap_or_else(|| s.url.clone());
                        let _ = writeln!(out, "  - [{title}](<{}>)", s.url);
                    }
                }
                out.push('\n');
            }
            ItemKind::Question => {
                if let Some(r) = &item.request {
                    let outcome = match r.outcome_words() {
                        Some(words) => format!(" ({})", one_line(&words)),
                        None => " (waiting for an answer)".into(),
                    };
                    let _ = writeln!(out, "> **Asked:** {}{outcome}\n", one_line(&r.prompt));
                }
            }
            ItemKind::SignIn => {
                let ended = item.sign_in.as_ref().and_then(|s| s.outcome_words());
                let ended = ended.map(|w| format!(" ({w})")).unwrap_or_default();
                let _ = writeln!(out, "> {}{ended}\n", one_line(&item.text));
            }
            ItemKind::Failure => {
                let _ = writeln!(out, "> **Failed:** {}\n", one_line(&item.text));
            }
            ItemKind::Result => {
                let _ = writeln!(out, "**Background result:** {}\n", item.text.trim());
            }
            ItemKind::Turn => {
                let _ = writeln!(out, "---\n\n*{}*\n", item.text);
            }
            ItemKind::Reasoning => {}
        }
    }
    if !c.sources.is_empty() {
        let _ = writeln!(out, "### Sources\n");
        for (i, s) in c.sources.iter().enumerate() {
            let title = s
                .title
                .as_deref()
                .map(one_line)
                .unwrap_or_else(|| s.url.clone());
            let _ = writeln!(out, "{}. [{title}](<{}>)", i + 1, s.url);
        }
        out.push('\n');
    }
}

/// The mission's report (its newest reply) as the Markdown the agent wrote.
pub fn report(m: &MissionRecord, events: &[StoredEvent]) -> Result<String> {
    let c = Conversation::from_events(events.iter().map(|e| &e.event));
    let report = c.report().ok_or_else(|| {
        Error::new(
            ErrorCode::NotFound,
            format!("Mission {} has no report yet.", m.session_id),
        )
    })?;
    let mut text = report.text.trim_end().to_owned();
    text.push('\n');
    Ok(text)
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

/// The formats a transcript is exported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum ExportFormat {
    Markdown,
    Json,
    /// The report alone, as the Markdown the agent wrote.
    Report,
    /// The report as a Word document, with its sources as References.
    Docx,
}

impl ExportFormat {
    /// The file-dialog filter: a name and the extension.
    pub fn filter(self) -> (&'static str, &'static str) {
        match self {
            ExportFormat::Markdown => ("Markdown", "md"),
            ExportFormat::Json => ("JSON", "json"),
            ExportFormat::Report => ("Markdown", "md"),
            ExportFormat::Docx => ("Word document", "docx"),
        }
    }
}

impl std::str::FromStr for ExportFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "md" | "markdown" => Ok(Self::Markdown),
            "json" => Ok(Self::Json),
            "report" => Ok(Self::Report),
            "docx" => Ok(Self::Docx),
            other => Err(Error::invalid_input(format!(
                "Unknown format \"{other}\": use md, json, report or docx."
            ))),
        }
    }
}

/// A file name from the objective's first words: letters, digits and spaces.
pub fn export_name(record: &MissionRecord, format: ExportFormat) -> String {
    let words: Vec<String> = record
        .objective
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' {
                c
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .take(8)
        .map(str::to_owned)
        .collect();
    let stem = if words.is_empty() {
        "Mission".to_owned()
    } else {
        words.join(" ")
    };
    let what = match format {
        ExportFormat::Report | ExportFormat::Docx => "report",
        _ => "mission",
    };
    format!("{stem} ({what}).{}", format.filter().1)
}

/// The stored mission's transcript in `format`, as the file's bytes.
pub async fn export(
    store: &MissionStore,
    session_id: &str,
    format: ExportFormat,
) -> Result<(MissionRecord, Vec<u8>)> {
    let record = store.require(session_id).await?;
    let events = store.events(session_id, 0, u32::MAX).await?;
    let bytes = match format {
        ExportFormat::Markdown => markdown(&record, &events).into_bytes(),
        ExportFormat::Report => report(&record, &events)?.into_bytes(),
        ExportFormat::Docx => report_docx::to_docx(&ReportDoc::from_mission(&record, &events)?)?,
        ExportFormat::Json => {
            let mut v = serde_json::to_vec_pretty(&json(&record, &events))
                .map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?;
            v.push(b'\n');
            v
        }
    };
    Ok((record, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::missions::protocol::MissionEvent;
    use crate::missions::store::MissionStatus;

    fn record() -> MissionRecord {
        MissionRecord {
            session_id: "ses_1".into(),
            objective: "Does urban heat raise admissions?\nLook at cohort studies.".into(),
            mission_type: "research".into(),
            budget_type: "fixed".into(),
            budget_cents: 2550,
            base_url: "http://127.0.0.1:9".into(),
            api_base: "/eve/v1".into(),
            status: MissionStatus::Complete,
            created_at: 1_777_627_800_000,
            updated_at: 1_777_627_860_000,
            last_event_id: Some("3".into()),
            event_count: 3,
            continuation_token: Some("ct_secret".into()),
        }
    }

    fn stored(seq: u64, name: &str, data: &str) -> StoredEvent {
        StoredEvent::new(
            seq,
            MissionEvent::new(Some(seq.to_string()), name.into(), data),
            1_777_627_801_000 + seq as i64 * 1000,
        )
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
            "Waiting (cancelled).\n",
        ] {
            assert!(md.contains(want), "missing {want:?} in:\n{md}");
        }
        assert!(
            !md.contains("ct_secret"),
            "the continuation token stays out"
        );
    }

    #[test]
    fn export_names_come_from_the_objective() {
        let named = |o: &str, f| {
            export_name(
                &MissionRecord {
                    objective: o.into(),
                    ..record()
                },
                f,
            )
        };
        assert_eq!(
            named("Does heat/raise admissions?", ExportFormat::Markdown),
            "Does heat raise admissions (mission).md"
        );
        assert_eq!(
            named("  ../../etc  ", ExportFormat::Json),
            "etc (mission).json"
        );
        assert_eq!(named("?!", ExportFormat::Json), "Mission (mission).json");
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
