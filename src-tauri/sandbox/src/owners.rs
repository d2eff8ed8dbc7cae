//! Which agent created each session, when the deployment has several: a session answers
//! only under its own agent's prefix (`crate::agents`).

use std::collections::HashMap;
use std::sync::Mutex;

/// Which agent created each session (multi-agent mode only).
#[derive(Default)]
pub struct Owners(Mutex<HashMap<String, String>>);

impl Owners {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}
