//! A faults request (`POST /_sandbox/faults`, served by `crate::admin`) applied to the
//! knobs: the body is a JSON object of [`Knobs`] fields by their names; fields left out
//! stay as they are, and `"clear": true` (applied first) goes back to what the sandbox
//! started with. The whole request is checked before anything changes: an unknown
//! field, a value of the wrong kind or out of range is refused naming the field, and
//! changes nothing.

use super::{Handle, Knobs};
use serde_json::{Map, Value};

/// Knobs that go with another: given alone, refused; the other given without it, it goes
/// back to its value here.
fn companions() -> [(&'static str, &'static str, Value); 2] {
    [
        ("stream429", "stream429RetryAfter", Value::Null),
        ("silenceMs", "silenceAfter", Value::from(0)),
    ]
}

impl Handle {
    /// Applies a faults request: every field checked, then all of them at once.
    pub fn change(&self, mut request: Map<String, Value>) -> Result<(), (String, String)> {
        let clear = match request.remove("clear") {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(_) => return Err(("clear".into(), "clear is true or false.".into())),
        };
        for (leader, companion, reset) in companions() {
            match (
                request.contains_key(leader),
                request.contains_key(companion),
            ) {
                (false, true) => {
                    return Err((companion.into(), format!("{companion} needs {leader}.")));
                }
                (true, false) => {
                    request.insert(companion.into(), reset);
                }
                _ => {}
            }
        }
        // Merged, checked and written under one lock, so a counted fault a request takes
        // meanwhile is not put back.
        let mut k = self.lock();
        let base = if clear {
            Knobs {
                mission_seed: k.mission_seed,
                ..self.0.defaults.clone()
            }
        } else {
            k.clone()
        };
        let Ok(Value::Object(mut merged)) = serde_json::to_value(base) else {
            unreachable!("knobs serialize to an object")
        };
        for (field, value) in &request {
            if !merged.contains_key(field) {
                return Err((field.clone(), format!("{field} is not a knob.")));
            }
            merged.insert(field.clone(), value.clone());
        }
        let knobs: Knobs = serde_json::from_value(Value::Object(merged))
            .map_err(|e| at_fault(&request, &e.to_string()))?;
        knobs.check().map_err(|(f, m)| (f.to_owned(), m))?;
        *k = knobs;
        if request.contains_key("missionSeed") {
            self.0
                .missions_seeded
                .store(0, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(())
    }
}

/// The field a refused request is refused for: the first that fails on its own.
fn at_fault(request: &Map<String, Value>, whole: &str) -> (String, String) {
    for (field, value) in request {
        let alone = Value::Object(Map::from_iter([(field.clone(), value.clone())]));
        if let Err(e) = serde_json::from_value::<Knobs>(alone) {
            return (field.clone(), format!("{field}: {e}."));
        }
    }
    ("".into(), format!("Not a fault request: {whole}."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knobs::{EventIds, HeldShape};
    use serde_json::json;

    fn request(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_request_is_checked_whole_and_a_refused_one_names_its_field_and_changes_nothing() {
        let h = Handle::default();
        h.change(request(
            json!({"eventIds": "opaque", "heldShape": "no-on", "agents": ["a"]}),
        ))
        .unwrap();
        let before = h.knobs();
        assert_eq!(before.event_ids, EventIds::Opaque);
        assert_eq!(before.held_shape, HeldShape::NoOn);
        for (bad, field) in [
            (json!({"eventIDs": "all"}), "eventIDs"),
            (json!({"delegate": true, "eventIds": "most"}), "eventIds"),
            (json!({"latencyMs": -1}), "latencyMs"),
            (json!({"successStatus": 204}), "successStatus"),
            (json!({"spendPercent": 1001}), "spendPercent"),
            (json!({"agents": ["v1"]}), "agents"),
            (json!({"silenceAfter": 3}), "silenceAfter"),
            (json!({"clear": "yes"}), "clear"),
        ] {
            let (named, said) = h.change(request(bad.clone())).unwrap_err();
            assert_eq!(named, field, "{bad}: {said}");
            assert_eq!(h.knobs(), before, "{bad} changed something");
        }
        // Fields left out stay; a companion given without its leader's partner resets.
        h.change(request(json!({"silenceMs": 500, "silenceAfter": 4})))
            .unwrap();
        h.change(request(json!({"silenceMs": 700}))).unwrap();
        let k = h.knobs();
        assert_eq!((k.silence_ms, k.silence_after), (700, 0));
        assert_eq!(k.event_ids, EventIds::Opaque);
        // Off by a zero or a "none", as the endpoint always took them.
        h.change(request(
            json!({"spendPercent": 0, "hostileDocument": "none", "completionEvent": ""}),
        ))
        .unwrap();
        let k = h.knobs();
        assert_eq!(
            (k.spend_percent, k.citations.hostile_document),
            (None, None)
        );
        assert_eq!(k.completion_event, None);
        h.change(request(json!({"clear": true}))).unwrap();
        assert_eq!(h.knobs(), Knobs::default());
    }
}
