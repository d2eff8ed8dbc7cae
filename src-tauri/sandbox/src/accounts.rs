//! The citation service's accounts: who is signed in to its console (the session cookie)
//! and the calls each made, which the account endpoint reports.

use axum::http::{HeaderMap, header};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) const SESSION_COOKIE: &str = "cb_session";

/// The sandbox's usage counters (shared by every key) and its signed-in browser
/// sessions, each with the email it signed in with.
#[derive(Default)]
pub struct Accounts {
    pub(crate) parse_calls: AtomicU64,
    pub(crate) cite_calls: AtomicU64,
    sessions: Mutex<HashMap<String, String>>,
}

impl Accounts {
    /// Starts a session for `email`; returns the `Set-Cookie` value that carries it.
    pub(crate) fn open_session(&self, email: &str) -> String {
        let token = format!(
            "{:016x}{:016x}",
            crate::rng::unpredictable_u64(),
            crate::rng::unpredictable_u64()
        );
        self.sessions
            .lock()
            .unwrap()
            .insert(token.clone(), email.to_owned());
        // Path=/ so the console at the base URL and the API under /citations both see it.
        format!("{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax")
    }

    /// The email of the session the request's cookie names, if it is one.
    pub(crate) fn signed_in(&self, headers: &HeaderMap) -> Option<String> {
        let token = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .find(|(k, _)| *k == SESSION_COOKIE)
            .map(|(_, v)| v.to_owned())?;
        self.sessions.lock().unwrap().get(&token).cloned()
    }

    /// Ends the request's session, if any.
    pub(crate) fn close_session(&self, headers: &HeaderMap) {
        let mut sessions = self.sessions.lock().unwrap();
        for v in headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
        {
            for (k, token) in v.split(';').filter_map(|kv| kv.trim().split_once('=')) {
                if k == SESSION_COOKIE {
                    sessions.remove(token);
                }
            }
        }
    }

    pub(crate) fn usage(&self) -> (u64, u64) {
        (
            self.parse_calls.load(Ordering::Relaxed),
            self.cite_calls.load(Ordering::Relaxed),
        )
    }
}
