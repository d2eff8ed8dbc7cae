//! Reading fields out of a record's data, tolerantly: every reader takes what is there
//! and does without what is not.

use crate::missions::protocol::facts::{Fact, Request, RequestOption};
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

/// The first text part of a message's parts.
pub(super) fn text_of_parts(parts: Option<&Value>) -> Option<&str> {
    parts?.as_array()?.iter().find_map(|p| {
        let kind = p.get("kind").or_else(|| p.get("type"))?.as_str()?;
        (kind == "text").then(|| p.get("text")?.as_str()).flatten()
    })
}

/// A call's outcome: `status` (26) or `outcome` (27).
pub(super) fn status(d: &Value) -> String {
    text(d, "status")
        .or_else(|| text(d, "outcome"))
        .unwrap_or("completed")
        .to_owned()
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
    let options = each(r, "options")
        .filter_map(|o| {
            Some(RequestOption {
                id: text(o, "id")?.to_owned(),
                label: text(o, "label").or_else(|| text(o, "id"))?.to_owned(),
                description: owned(o, "description"),
                style: owned(o, "style"),
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
