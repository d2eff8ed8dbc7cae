//! Reading fields out of a record's data, tolerantly: every reader takes what is there
//! and does without what is not.

use crate::missions::protocol::facts::{Fact, FileRef, MAX_FILES, Request, RequestOption};
use crate::missions::protocol::outcomes::WorkOutcome;
use serde_json::Value;

/// A string field.
pub(super) fn text<'a>(d: &'a Value, key: &str) -> Option<&'a str> {
    d.get(key).and_then(Value::as_str)
}

/// A string field, owned.
pub(super) fn owned(d: &Value, key: &str) -> Option<String> {
    text(d, key).map(str::to_owned)
}

/// An array field's elements (none when it is missing or not an array).
pub(super) fn each<'a>(d: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    d.get(key).and_then(Value::as_array).into_iter().flatten()
}

/// A tool call's input as it streams (`inputTextDelta`, or `delta`); nothing without the
/// call it is for.
pub(super) fn call_input(d: &Value) -> Vec<Fact> {
    let delta = text(d, "inputTextDelta").or_else(|| text(d, "delta"));
    (text(d, "callId").into_iter())
        .map(|call| Fact::CallInput {
            call: call.to_owned(),
            delta: delta.unwrap_or("").to_owned(),
        })
        .collect()
}

/// eve's `{code, message, hint?}` error, or a `message` beside the other fields. eve
/// 27's hint says what the person can do about it, so it goes with the message.
pub(super) fn error_message(d: &Value) -> Option<String> {
    let e = d.get("error").unwrap_or(d);
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| e.as_str())?;
    Some(match e.get("hint").and_then(Value::as_str) {
        Some(hint) if !hint.trim().is_empty() => format!("{message} ({})", hint.trim()),
        _ => message.to_owned(),
    })
}

/// The person's message from its text and its parts' files; none when it has neither.
pub(super) fn user_message(text: Option<&str>, parts: Option<&Value>) -> Option<Fact> {
    let text = text.or_else(|| text_of_parts(parts));
    let files = files_of_parts(parts);
    (text.is_some() || !files.is_empty()).then(|| Fact::UserMessage {
        text: text.unwrap_or("").to_owned(),
        files,
    })
}

/// The first text part of a message's parts.
pub(super) fn text_of_parts(parts: Option<&Value>) -> Option<&str> {
    parts?.as_array()?.iter().find_map(|p| {
        let kind = p.get("kind").or_else(|| p.get("type"))?.as_str()?;
        (kind == "text").then(|| p.get("text")?.as_str()).flatten()
    })
}

const MAX_NAME: usize = 200;
const MAX_MEDIA_TYPE: usize = 100;
const MAX_URL: usize = 2048;

/// The file parts of a message's parts (`{type|kind: "file", ...}`), at most [`MAX_FILES`].
pub(super) fn files_of_parts(parts: Option<&Value>) -> Vec<FileRef> {
    parts
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| {
            p.get("kind")
                .or_else(|| p.get("type"))
                .and_then(Value::as_str)
                == Some("file")
        })
        .filter_map(file_ref)
        .take(MAX_FILES)
        .collect()
}

/// A file part or an agent's file (its `value` and `valueRef`) as one [`FileRef`]: the name
/// (`filename`, `name`) cut to its last path segment, stripped of control and
/// direction-changing characters and bounded; the media type when it looks like one (else
/// `application/octet-stream`); the size when it is a whole number; the URL only when it
/// is http(s) and bounded. `None` for what is not an object.
pub(super) fn file_ref(p: &Value) -> Option<FileRef> {
    let p = p.as_object()?;
    let value = p.get("value").filter(|v| v.is_object());
    let reference = p.get("valueRef").filter(|v| v.is_object());
    let field = |key: &str| {
        p.get(key)
            .or_else(|| value.and_then(|v| v.get(key)))
            .or_else(|| reference.and_then(|v| v.get(key)))
    };
    let str_of = |key: &str| field(key).and_then(Value::as_str);
    let name = str_of("filename")
        .or_else(|| str_of("name"))
        .map(safe_name)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "file".to_owned());
    let media_type = str_of("mediaType")
        .map(|m| {
            m.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|m| is_media_type(m))
        .unwrap_or_else(|| "application/octet-stream".to_owned());
    let size = field("size").and_then(Value::as_u64);
    let url = str_of("url")
        .map(str::trim)
        .filter(|u| u.len() <= MAX_URL)
        .and_then(http_url);
    Some(FileRef {
        name,
        media_type,
        size,
        url,
    })
}

fn safe_name(raw: &str) -> String {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let clean: String = last
        .chars()
        .filter(|c| {
            !c.is_control()
                && !matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
        })
        .take(MAX_NAME)
        .collect();
    clean.trim().to_owned()
}

fn is_media_type(m: &str) -> bool {
    let token = |t: &str| {
        !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b))
    };
    m.len() <= MAX_MEDIA_TYPE && matches!(m.split_once('/'), Some((a, b)) if token(a) && token(b))
}

/// An http(s) address with a host, as the URL parser writes it (so nothing in it can
/// close a Markdown `<…>` or an attribute): the only kind a file's link opens.
fn http_url(u: &str) -> Option<String> {
    let parsed = url::Url::parse(u).ok()?;
    (matches!(parsed.scheme(), "http" | "https") && parsed.host().is_some())
        .then(|| parsed.to_string())
        .filter(|s| s.len() <= MAX_URL)
}

/// A call's outcome: `status` (26) or `outcome` (27).
pub(super) fn status(d: &Value) -> WorkOutcome {
    WorkOutcome::from_wire(
        text(d, "status")
            .or_else(|| text(d, "outcome"))
            .unwrap_or("completed"),
    )
}

/// Money a step or call cost: `usage.costUsd`, when it is a real amount.
pub(super) fn cost(d: &Value) -> Option<f64> {
    d.pointer("/usage/costUsd")
        .and_then(Value::as_f64)
        .filter(|c| c.is_finite() && *c > 0.0)
}

/// eve B's cumulative spend on a waiting or terminal record: its own model calls plus
/// what the agents it delegated to spent.
pub(super) fn total_spent(d: &Value) -> Option<Fact> {
    d.pointer("/usage/costUsd")
        .and_then(Value::as_f64)
        .filter(|c| c.is_finite() && *c >= 0.0)
        .map(|usd| Fact::SpendReported { usd })
}

/// A question, approval or budget prompt: `r` the request, `id` the id an answer names.
pub(super) fn request_of(r: &Value, id: Option<&Value>) -> Option<Request> {
    let id = id?.as_str()?.to_owned();
    let approval = text(r, "kind").is_some_and(|k| k.ends_with("approval"));
    let options = each(r, "options")
        .filter_map(|o| {
            let id = text(o, "id")?;
            Some(RequestOption {
                id: id.to_owned(),
                label: text(o, "label").unwrap_or(id).to_owned(),
                description: owned(o, "description"),
                style: owned(o, "style").or_else(|| approval_style(approval, id)),
            })
        })
        .collect();
    Some(Request {
        id,
        kind: owned(r, "kind").unwrap_or_else(|| "question".into()),
        prompt: owned(r, "prompt")
            .or_else(|| owned(r, "title"))
            .unwrap_or_else(|| "The mission asks for an answer.".into()),
        title: owned(r, "title").filter(|t| !t.trim().is_empty()),
        options,
        allow_freeform: r
            .get("allowFreeform")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

/// How eve's own client draws an approval's options when the server names no style: its
/// `approve` as the primary action, its `deny` (B: `cancel`) as the destructive one.
fn approval_style(approval: bool, option: &str) -> Option<String> {
    let style = match option {
        _ if !approval => return None,
        "approve" => "primary",
        "deny" | "cancel" => "danger",
        _ => return None,
    };
    Some(style.to_owned())
}

/// A call's end: `callId` (or `result.callId`), its status, its output (or
/// `result.output`) and error. The tool's name comes along for a call whose request was
/// never seen (one known only from its approval).
pub(super) fn call_settled(d: &Value) -> Option<Fact> {
    let call = text(d, "callId").or_else(|| d.pointer("/result/callId").and_then(Value::as_str))?;
    Some(Fact::CallSettled {
        call: call.to_owned(),
        name: d
            .pointer("/result/toolName")
            .and_then(Value::as_str)
            .map(str::to_owned),
        status: status(d),
        output: d
            .pointer("/result/output")
            .or_else(|| d.get("output"))
            .cloned(),
        error: error_message(d),
    })
}
