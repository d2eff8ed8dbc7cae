//! One record of a mission's stream, as received and as stored: raw and append-only.

use crate::missions::protocol::seeds::{EventKind, Payload};
use serde::Serialize;
use ts_rs::TS;

/// One event of a mission, as received: its id, name, kind and raw JSON data
/// (a string when the data was not JSON).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct MissionEvent {
    /// The id the server put on this very event (its own SSE `id:` field, or `id` in an
    /// NDJSON line). `None` when the event carried none, even if an earlier id is still the
    /// stream's resume point; an empty id (the SSE reset) is `None` too. Only these ids are
    /// used to recognise a repeated event.
    pub id: Option<String>,
    pub event: String,
    pub kind: EventKind,
    #[ts(type = "unknown")]
    pub data: serde_json::Value,
}

impl MissionEvent {
    pub fn new(id: Option<String>, event: String, data: &str) -> Self {
        let data = serde_json::from_str(data)
            .unwrap_or_else(|_| serde_json::Value::String(data.to_owned()));
        Self {
            id,
            kind: EventKind::of(&event),
            event,
            data,
        }
    }

    /// The typed payload of a known kind; `None` for unknown kinds or data of
    /// another shape (the raw `data` is still there).
    pub fn payload(&self) -> Option<Payload> {
        let d = self.data.clone();
        let p = match self.kind {
            EventKind::TurnStarted => Payload::TurnStarted(serde_json::from_value(d).ok()?),
            EventKind::Plan => Payload::Plan(serde_json::from_value(d).ok()?),
            EventKind::SearchQuery => Payload::SearchQuery(serde_json::from_value(d).ok()?),
            EventKind::SourceFound => Payload::SourceFound(serde_json::from_value(d).ok()?),
            EventKind::Evidence => Payload::Evidence(serde_json::from_value(d).ok()?),
            EventKind::FindingVerified => Payload::FindingVerified(serde_json::from_value(d).ok()?),
            EventKind::SpendUpdated => Payload::SpendUpdated(serde_json::from_value(d).ok()?),
            EventKind::ReportFinal => Payload::ReportFinal(serde_json::from_value(d).ok()?),
            _ => return None,
        };
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_keep_unknown_kinds_and_non_json_data() {
        let e = MissionEvent::new(
            Some("3".into()),
            "weather.report".into(),
            r#"{"sky":"grey"}"#,
        );
        assert_eq!(e.kind, EventKind::Unknown);
        assert_eq!(e.data["sky"], "grey");
        assert!(e.payload().is_none());
        let e = MissionEvent::new(None, "plan".into(), "not json");
        assert_eq!(e.data, serde_json::Value::String("not json".into()));
        let e = MissionEvent::new(
            None,
            "source.found".into(),
            r#"{"title":"T","url":"https://doi.org/x","year":2020}"#,
        );
        match e.payload() {
            Some(Payload::SourceFound(s)) => {
                assert_eq!(s.url.as_deref(), Some("https://doi.org/x"))
            }
            other => panic!("{other:?}"),
        }
        assert!(MissionEvent::new(None, "session.waiting".into(), "{}").is_terminal());
        assert!(MissionEvent::new(None, "session.completed".into(), "{}").is_terminal());
        assert!(!MissionEvent::new(None, "turn.cancelled".into(), "{}").is_terminal());
    }
}
