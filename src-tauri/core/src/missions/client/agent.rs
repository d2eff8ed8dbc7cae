//! Which agent of a deployment Casebook talks to: the API base its session routes hang
//! under, and what eve's info route says of the agent there.
//!
//! eve serves one root agent at `/eve/v1`; a deployment with several serves each at
//! `/eve/<name>/v1` (eve about 0.63 and later) or `/eve/agents/<name>/eve/v1` (0.27.3,
//! `withEve({agents})`), and its own client keeps any path in its host
//! (`packages/eve/src/client/url.ts`). So the base is a path the person gives whole.

use crate::error::{Error, Result};
use serde::Serialize;
use ts_rs::TS;

/// eve's single root agent.
pub const DEFAULT_API_BASE: &str = "/eve/v1";
/// A base longer than this is not a route prefix anyone typed.
const MAX_BASE_CHARS: usize = 200;
/// eve's info answer lists the agent's tools, skills and instructions (Markdown):
/// large for an agent with many, never this large.
pub(crate) const MAX_INFO_BYTES: u64 = 4_000_000;

/// `raw` as an API base path: `/eve/v1`, `/eve/researcher/v1`,
/// `/eve/agents/researcher/eve/v1`, or any other prefix a proxy serves eve under. Empty
/// means the default. Refused, with the reason: anything but a path of plain segments.
pub fn parse_api_base(raw: &str) -> Result<String> {
    let s = raw.trim();
    if s.is_empty() {
        return Ok(DEFAULT_API_BASE.to_owned());
    }
    let bad = |why: &str| {
        Error::invalid_input(format!(
            "\"{s}\" is not an API base path: {why} It looks like /eve/v1, /eve/<agent>/v1 or /eve/agents/<agent>/eve/v1."
        ))
    };
    if s.chars().count() > MAX_BASE_CHARS {
        return Err(bad("it is too long."));
    }
    if s.contains("://") {
        return Err(bad(
            "it is a path under the services' base URL, not a URL of its own.",
        ));
    }
    if !s.starts_with('/') {
        return Err(bad("it must start with /."));
    }
    let trimmed = s.trim_end_matches('/');
    if trimmed.is_empty() {
        return Err(bad("it names no path."));
    }
    for segment in trimmed[1..].split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(bad("it has an empty, \".\" or \"..\" segment."));
        }
        if !segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
        {
            return Err(bad(
                "a segment may hold only letters, digits, -, ., _ and ~.",
            ));
        }
    }
    Ok(trimmed.to_owned())
}

/// What eve's info route (`GET <base>/info`, `kind: "eve-agent-info"`) says of the agent.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct AgentInfo {
    /// The API base it was asked at.
    pub api_base: String,
    pub name: Option<String>,
    pub description: Option<String>,
    /// The model the agent runs on (`agent.model.id`).
    pub model: Option<String>,
    /// `development` or `production`.
    pub mode: Option<String>,
    /// The info answer's own format version (eve writes 1), not the agent's.
    pub info_version: Option<u64>,
}

/// A short string field: what eve writes is a name, never pages.
fn short(v: &serde_json::Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(serde_json::Value::as_str)
        .map(|s| s.trim().chars().take(200).collect::<String>())
        .filter(|s| !s.is_empty())
}

impl AgentInfo {
    pub(crate) fn read(api_base: &str, v: &serde_json::Value) -> Self {
        Self {
            api_base: api_base.to_owned(),
            name: short(v, "/agent/name"),
            description: short(v, "/agent/description"),
            model: short(v, "/agent/model/id"),
            mode: short(v, "/mode"),
            info_version: v.get("version").and_then(serde_json::Value::as_u64),
        }
    }

    /// `researcher (sandbox/research-1)`, or the base when the server named nothing.
    pub fn label(&self) -> String {
        match (&self.name, &self.model) {
            (Some(n), Some(m)) => format!("{n} ({m})"),
            (Some(n), None) => n.clone(),
            (None, Some(m)) => format!("the agent at {} ({m})", self.api_base),
            (None, None) => format!("the agent at {}", self.api_base),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn each_shape_eve_serves_is_a_base_and_the_rest_are_refused_with_the_reason() {
        for (raw, want) in [
            ("", "/eve/v1"),
            ("  ", "/eve/v1"),
            ("/eve/v1", "/eve/v1"),
            ("/eve/v1/", "/eve/v1"),
            ("/eve/researcher/v1", "/eve/researcher/v1"),
            (
                " /eve/agents/researcher/eve/v1 ",
                "/eve/agents/researcher/eve/v1",
            ),
            ("/api/eve/v1", "/api/eve/v1"),
        ] {
            assert_eq!(parse_api_base(raw).unwrap(), want, "{raw:?}");
        }
        for (raw, says) in [
            ("eve/v1", "start with /"),
            ("https://x.example/eve/v1", "not a URL"),
            ("/", "names no path"),
            ("/eve//v1", "empty"),
            ("/eve/../v1", "\"..\""),
            ("/eve/v1?x=1", "only letters"),
            ("/eve/a b/v1", "only letters"),
            ("/eve/v1#f", "only letters"),
        ] {
            let e = parse_api_base(raw).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidInput);
            assert!(e.message.contains(says), "{raw:?}: {}", e.message);
            assert!(e.message.contains("/eve/<agent>/v1"), "{}", e.message);
        }
        assert!(parse_api_base(&format!("/{}", "a".repeat(300))).is_err());
    }

    #[test]
    fn eve_s_info_answer_gives_the_name_model_and_mode_and_nothing_else_is_needed() {
        let v = serde_json::json!({
            "kind": "eve-agent-info", "version": 1, "mode": "production",
            "agent": {"name": "researcher", "model": {"id": "anthropic/claude"}, "agentRoot": "/x"},
            "tools": {"available": []}
        });
        let info = AgentInfo::read("/eve/researcher/v1", &v);
        assert_eq!(info.name.as_deref(), Some("researcher"));
        assert_eq!(info.model.as_deref(), Some("anthropic/claude"));
        assert_eq!(info.mode.as_deref(), Some("production"));
        assert_eq!(info.info_version, Some(1));
        assert_eq!(info.label(), "researcher (anthropic/claude)");
        let bare = AgentInfo::read("/eve/v1", &serde_json::json!({}));
        assert_eq!(bare.label(), "the agent at /eve/v1");
    }
}
