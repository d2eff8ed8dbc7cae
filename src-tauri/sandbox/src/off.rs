//! Knob values where a zero, an empty name or `"none"` means off: how the faults endpoint
//! has always taken them, read into an `Option` (`null` is off too).

use serde::de::{DeserializeOwned, Error};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A count or a size; 0 is off.
pub fn zero<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.filter(|n| *n > 0))
}

/// A name; `""` is off.
pub fn empty<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.filter(|s| !s.is_empty()))
}

/// One of a value's names; `"none"` is off.
pub fn none<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        Value::String(s) if s == "none" => Ok(None),
        v => serde_json::from_value(v)
            .map(Some)
            .map_err(D::Error::custom),
    }
}
