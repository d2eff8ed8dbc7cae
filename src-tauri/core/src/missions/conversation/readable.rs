//! How the conversation writes what the records carry for a person to read: a step's
//! input and output, the sources in an output, a step in one line.

use crate::missions::conversation::{Source, Step, StepStatus};
use serde_json::Value;

/// Tool output, input and messages kept per item: a step's readable output is a
/// summary, the records keep the rest.
pub(super) const MAX_TOOL_TEXT: usize = 4_000;

pub(super) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(super) fn bounded(s: &str) -> String {
    if s.len() <= MAX_TOOL_TEXT {
        return s.to_owned();
    }
    let mut end = MAX_TOOL_TEXT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// A step's input as a person reads it: the query or URL when that is what it is.
pub(super) fn readable_input(v: &Value) -> String {
    for k in ["query", "q", "url", "path", "prompt"] {
        if let Some(s) = v.get(k).and_then(Value::as_str)
            && v.as_object().is_some_and(|o| o.len() <= 2)
        {
            return bounded(s);
        }
    }
    match v {
        Value::String(s) => bounded(s),
        Value::Null => String::new(),
        _ => bounded(&v.to_string()),
    }
}

/// What a step's output says, with its sources left to the source list.
pub(super) fn readable_output(v: &Value, had_sources: bool) -> String {
    match v {
        Value::String(s) => bounded(s),
        Value::Object(o) if had_sources && o.len() == 1 && o.contains_key("sources") => {
            String::new()
        }
        Value::Object(o) => {
            for k in ["text", "summary", "content", "result"] {
                if let Some(s) = o.get(k).and_then(Value::as_str) {
                    return bounded(s);
                }
            }
            bounded(&serde_json::to_string_pretty(v).unwrap_or_default())
        }
        _ => bounded(&v.to_string()),
    }
}

/// The sources in a step's output: `{sources: [{url, title}]}`, `{results: [...]}`, a
/// list of them, or one `{url, title}`.
pub(super) fn sources_of(v: &Value) -> Vec<(String, Option<String>)> {
    let one = |s: &Value| {
        let url = s
            .get("url")
            .or_else(|| s.get("link"))
            .or_else(|| s.get("href"))
            .and_then(Value::as_str)
            .filter(|u| u.starts_with("http://") || u.starts_with("https://"))?;
        let title = s
            .get("title")
            .or_else(|| s.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        Some((url.to_owned(), title))
    };
    let list = v.get("sources").or_else(|| v.get("results")).unwrap_or(v);
    match list {
        Value::Array(a) => a.iter().take(100).filter_map(one).collect(),
        Value::Object(_) => one(list).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// A step in one line: "Searching: urban heat exposure", "Read: Global report …".
pub(super) fn step_line(step: &Step, sources: &[Source]) -> String {
    let running = step.status == StepStatus::Running;
    let name = step.name.to_lowercase();
    let input = step.input.as_str();
    let is_url = input.starts_with("http://") || input.starts_with("https://");
    let what = if is_url {
        sources
            .iter()
            .find(|s| s.url == input)
            .and_then(|s| s.title.clone())
            .unwrap_or_else(|| input.to_owned())
    } else {
        one_line(input)
    };
    // A sub-agent named `researcher` is not a search: it says what it is.
    let tool = step.kind != "agent";
    let verb = if tool && name.contains("search") {
        if running { "Searching" } else { "Searched" }
    } else if tool
        && (is_url || name.contains("read") || name.contains("fetch") || name.contains("browse"))
    {
        if running { "Reading" } else { "Read" }
    } else {
        let label = match step.kind.as_str() {
            "task" => format!("Background task {}", step.name),
            "agent" => format!("Sub-agent {}", step.name),
            _ => step.name.clone(),
        };
        return match (running, what.is_empty() || what.starts_with('{')) {
            (true, _) => format!("Running {label}"),
            (false, true) => label,
            (false, false) => format!("{label}: {}", short(&what)),
        };
    };
    if what.is_empty() || what.starts_with('{') {
        verb.to_owned()
    } else {
        format!("{verb}: {}", short(&what))
    }
}

pub(super) fn short(s: &str) -> String {
    let mut out: String = s.chars().take(120).collect();
    if s.chars().count() > 120 {
        out.push('…');
    }
    out
}
