//! The sandboxes the suites start, one function per kind, so a test says what it needs
//! (a protocol, how long a mission is) and not how a sandbox is configured.

use casebook_sandbox::{MissionProtocol, Pace, RunningSandbox, SandboxConfig};

/// A sandbox whose missions speak `protocol` and play about `events` records each with no
/// pause between them: what a test that follows missions to their end starts.
pub async fn missions(protocol: MissionProtocol, events: u64) -> RunningSandbox {
    casebook_sandbox::start(SandboxConfig {
        pace: Pace::Instant,
        mission_pace_ms: Some(0),
        mission_events: Some(events),
        mission_protocol: protocol,
        ..Default::default()
    })
    .await
    .expect("a sandbox starts on loopback")
}

/// A sandbox on a runtime of its own, for tests that block on the `casebook` binary: the
/// sandbox keeps answering while the test waits for the child.
pub struct Blocking {
    rt: Option<tokio::runtime::Runtime>,
    sandbox: Option<RunningSandbox>,
}

impl Blocking {
    pub fn start(config: SandboxConfig) -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime for the sandbox");
        let sandbox = rt
            .block_on(casebook_sandbox::start(config))
            .expect("a sandbox starts on loopback");
        Self {
            rt: Some(rt),
            sandbox: Some(sandbox),
        }
    }

    pub fn sandbox(&self) -> &RunningSandbox {
        self.sandbox.as_ref().expect("running until dropped")
    }

    /// Runs `work` on the sandbox's runtime (a client in this process, say).
    pub fn block_on<F: std::future::Future>(&self, work: F) -> F::Output {
        self.rt
            .as_ref()
            .expect("running until dropped")
            .block_on(work)
    }
}

impl Drop for Blocking {
    /// Stops the sandbox, not waiting long for requests it still holds (a cancelled
    /// cite's connection may be in a 30-second hold).
    fn drop(&mut self) {
        let Some(rt) = self.rt.take() else { return };
        if let Some(s) = self.sandbox.take() {
            rt.block_on(async {
                let _ = tokio::time::timeout(std::time::Duration::from_secs(2), s.stop()).await;
            });
        }
        rt.shutdown_timeout(std::time::Duration::from_secs(1));
    }
}

/// The whole stream of session `id` as the service at `url` holds it, read in one
/// connection once the session is over.
pub async fn stream_text(url: &str, key: &str, id: &str) -> String {
    reqwest::Client::new()
        .get(format!("{url}/eve/v1/session/{id}/stream"))
        .bearer_auth(key)
        .header("Accept", "text/event-stream")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// The ids of session `id`'s events (its `id: ` lines), as [`stream_text`] reads them.
pub async fn stream_ids(url: &str, key: &str, id: &str) -> Vec<String> {
    stream_text(url, key, id)
        .await
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .map(str::to_owned)
        .collect()
}

/// `POST {base}{path}` with the sandbox's key and `body` as JSON: the response, whatever
/// its status.
pub async fn post(sb: &RunningSandbox, path: &str, body: &serde_json::Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}{path}", sb.base_url()))
        .bearer_auth(sb.key())
        .json(body)
        .send()
        .await
        .expect("the sandbox answers on loopback")
}
