//! Casebook's sandbox: both services' contract served on loopback.
//!
//! The real services have no sandbox and no trial key, so Casebook ships this one.
//! It is the app's default backend until a real account is connected, and every
//! test runs against it. It is not a mock: it parses and rewrites real documents
//! and streams real missions. Its choices for what the contract leaves "not shown"
//! are recorded in `docs/contract.md`.

// A function longer than clippy.toml's 150 lines is split (`make lint`); tests are
// exempt: a scenario reads top to bottom.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
// Handlers answer early with a ready `Response` as their error; boxing it would only
// add noise to every handler.
#![allow(clippy::result_large_err)]

mod accounts;
mod admin;
pub mod agents;
mod auth;
mod body;
mod citations;
pub mod cite_variants;
mod config;
mod console;
mod discovery;
pub mod engine;
mod errors;
pub mod knobs;
mod missions;
mod off;
mod owners;
mod ratelimit;
mod rng;
mod routes;
mod shared;

pub use cite_variants::{CiteShape, CiteStyle, CiteVariants, ErrorFamily, Placement};
pub use knobs::{ChildRoute, EventIds, Failure, HeldShape, Knobs, MissionProtocol, ParseShape};
pub use missions::{ChildStreamRequest, StreamRequest};

/// Pure entry points into the request parsers, for `src-tauri/fuzz`; not an API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::citations::check_request;
    pub use crate::missions::routes::check_message;
}

pub use config::{DEMO_KEY, Pace, SandboxConfig};
pub use ratelimit::RateLimit;

use std::net::SocketAddr;

use std::sync::Arc;
use tokio::sync::oneshot;

/// A sandbox serving in the background. Dropping it stops the server.
pub struct RunningSandbox {
    base_url: String,
    addr: SocketAddr,
    keys: Vec<String>,
    shared: Arc<shared::Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl RunningSandbox {
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The keys this sandbox accepts.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// The first accepted key: what a client of this sandbox should send.
    pub fn key(&self) -> &str {
        &self.keys[0]
    }

    /// Switches faults and variants on and off while the sandbox runs.
    pub fn knobs(&self) -> &knobs::Handle {
        &self.shared.knobs
    }

    /// The stream requests an eve-mode session has received so far, in order: what
    /// each asked for (`startIndex`, `includeTailIndex`). Empty for an unknown or
    /// legacy session.
    /// Every POST an eve-mode session received after its create (follow-ups, cancels,
    /// ends), in order, as `{route, body}`: what a client sent, from the sandbox's side.
    pub fn posts(&self, session_id: &str) -> Vec<serde_json::Value> {
        self.shared.missions.posts(session_id)
    }

    pub fn stream_requests(&self, session_id: &str) -> Vec<StreamRequest> {
        self.shared.missions.stream_requests(session_id)
    }

    /// The requests for a delegated sub-agent's stream so far, by route (the parent's or
    /// its own), refused ones too. Empty until one is asked for.
    pub fn child_stream_requests(&self, child_id: &str) -> Vec<ChildStreamRequest> {
        self.shared.missions.child_stream_requests(child_id)
    }

    /// Stops serving and waits until the listener is closed.
    pub async fn stop(mut self) {
        self.shared.missions.shutdown();
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for RunningSandbox {
    fn drop(&mut self) {
        self.shared.missions.shutdown();
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Binds 127.0.0.1 and serves in a background task. Returns once the port is open.
pub async fn start(config: SandboxConfig) -> std::io::Result<RunningSandbox> {
    let keys = if config.keys.is_empty() {
        vec![DEMO_KEY.to_owned()]
    } else {
        config.keys.clone()
    };
    if let Some(dir) = &config.data_dir {
        std::fs::create_dir_all(dir)?;
    }
    let knobs = knobs::Handle::new(Knobs {
        mission_protocol: config.mission_protocol,
        mission_seed: config.mission_seed,
        citations: config.citations,
        ..Knobs::default()
    });
    let shared = Arc::new(shared::Shared {
        keys: keys.clone(),
        limiter: ratelimit::Limiter::new(config.rate_limit),
        knobs: knobs.clone(),
        citations: accounts::Accounts::default(),
        owners: owners::Owners::default(),
        missions: missions::Missions::open(
            config.data_dir.as_deref(),
            missions::Defaults {
                pace: config.pace,
                pace_ms: config.mission_pace_ms,
                events: config.mission_events,
                reply_deltas: config.mission_reply_deltas,
            },
            knobs,
        )?,
    });
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", config.port)).await?;
    let addr = listener.local_addr()?;
    let (tx, rx) = oneshot::channel::<()>();
    let app = routes::router(shared.clone());
    let task = tokio::spawn(async move {
        let serve = axum::serve(listener, app).with_graceful_shutdown(async {
            let _ = rx.await;
        });
        if let Err(e) = serve.await {
            tracing::error!("sandbox stopped: {e}");
        }
    });
    Ok(RunningSandbox {
        base_url: format!("http://{addr}"),
        addr,
        keys,
        shared,
        shutdown: Some(tx),
        task: Some(task),
    })
}
