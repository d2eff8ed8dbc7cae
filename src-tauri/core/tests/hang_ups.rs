//! A service that hangs up on requests: its connection reset once the request's
//! headers are in, with no answer. Between the client and the real sandbox sits a
//! loopback front that does that to the first few connections and passes the rest
//! through, so the close always comes before any answer.

mod common;

use casebook_core::ErrorCode;
use casebook_core::citations::client::{CitationClient, Input, OutputKind, no_progress};
use casebook_core::keys::ApiKey;
use casebook_core::missions::client::{InvestigationClient, MissionSpec};
use casebook_core::net::connection::Connection;
use casebook_core::net::http::{Progress, RetryPolicy};
use casebook_sandbox::{RunningSandbox, SandboxConfig, start};
use common::cite_defaults;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};

struct Front {
    url: String,
    /// Connections accepted so far, hung up on or not.
    connections: Arc<AtomicUsize>,
}

impl Front {
    /// A citation client that talks to the sandbox `s` through this front.
    fn citations(&self, s: &RunningSandbox) -> CitationClient {
        CitationClient::new(
            Connection::new(&self.url).unwrap(),
            ApiKey::parse(s.key()).unwrap(),
        )
    }
}

/// Resets the connections `hang_up` picks (by their number, from 0) as soon as their
/// request headers are read; the others are piped to `to` untouched.
async fn front(to: SocketAddr, hang_up: fn(usize) -> bool) -> Front {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let n = count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                if hang_up(n) {
                    let mut seen = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                        match client.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(k) => seen.extend_from_slice(&buf[..k]),
                        }
                    }
                    // A reset, not a polite close: what a server gone mid-request leaves.
                    let _ = client.set_zero_linger();
                    return;
                }
                if let Ok(mut service) = TcpStream::connect(to).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut service).await;
                }
            });
        }
    });
    Front { url, connections }
}

fn sandbox_addr(s: &RunningSandbox) -> SocketAddr {
    s.base_url()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap()
}

fn document() -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/docx/headings-lorem-multirun.docx"),
    )
    .unwrap()
}

/// Cites the test document through `client`: the outcome, and each second of every
/// countdown before a resend, as (seconds left, attempt).
async fn cite_with_countdowns(
    client: &CitationClient,
) -> (casebook_core::Result<OutputKind>, Vec<(u64, u32)>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let progress = move |p: Progress| {
        if let Progress::RateLimited {
            seconds, attempt, ..
        } = p
        {
            log.lock().unwrap().push((seconds, attempt));
        }
    };
    let doc = document();
    let cited = cite_defaults(client, &Input::document(&doc).unwrap(), &progress)
        .await
        .map(|c| c.kind);
    let ticks = seen.lock().unwrap().clone();
    (cited, ticks)
}

#[tokio::test]
async fn a_cite_hung_up_on_is_sent_again_after_a_countdown() {
    let s = start(SandboxConfig::default()).await.unwrap();
    let front = front(sandbox_addr(&s), |n| n < 2).await;
    let client = front.citations(&s);
    let (cited, waits) = cite_with_countdowns(&client).await;
    assert_eq!(cited.unwrap(), OutputKind::Docx);
    assert_eq!(
        waits,
        vec![(1, 1), (2, 2), (1, 2)],
        "1 s, then 2 s counted down"
    );
    assert_eq!(front.connections.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_parse_hung_up_on_every_time_says_so_after_its_retries() {
    let s = start(SandboxConfig::default()).await.unwrap();
    let front = front(sandbox_addr(&s), |_| true).await;
    let client = front.citations(&s).with_retry(RetryPolicy {
        max_retries: 1,
        max_wait: Duration::from_secs(5),
    });
    let err = client
        .parse(&Input::essay("Some text.").unwrap(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Network, "{err}");
    assert!(
        err.message()
            .starts_with("The service closed the connection before answering")
            && err.message().ends_with("Gave up after 2 attempts."),
        "{err}"
    );
    assert_eq!(front.connections.load(Ordering::SeqCst), 2);
}

/// A service that answers 429 once and then hangs up: the close is taken for the
/// rate limit it most likely hides, waited out at least as long as the 429 asked,
/// and what the cite ends with once the retries run out.
#[tokio::test]
async fn a_hang_up_after_a_429_is_the_rate_limit_again() {
    let s = start(SandboxConfig::default()).await.unwrap();
    s.knobs().set(|k| {
        k.storm = casebook_sandbox::knobs::Storm {
            count: 1000,
            retry_after: 3,
        }
    });
    let front = front(sandbox_addr(&s), |n| n > 0).await;
    let client = front.citations(&s).with_retry(RetryPolicy {
        max_retries: 2,
        max_wait: Duration::from_secs(5),
    });
    let (cited, ticks) = cite_with_countdowns(&client).await;
    let err = cited.unwrap_err();
    assert_eq!(err.code(), ErrorCode::RateLimited, "{err}");
    assert_eq!(err.retry_after_secs(), Some(3), "{err}");
    assert!(
        err.message()
            .contains("closed the connection before answering")
            && err.message().ends_with("Gave up after 3 attempts."),
        "{err}"
    );
    // Both waits count down from 3 s: the second is not the 2 s a bare hang-up gets.
    assert_eq!(ticks, vec![(3, 1), (2, 1), (1, 1), (3, 2), (2, 2), (1, 2)]);
    assert_eq!(front.connections.load(Ordering::SeqCst), 3);
}

/// Starting a mission twice would start two: a hang-up is reported, never resent.
#[tokio::test]
async fn a_mission_start_hung_up_on_is_not_sent_again() {
    let s = start(SandboxConfig::default()).await.unwrap();
    let front = front(sandbox_addr(&s), |n| n < 1).await;
    let client = InvestigationClient::new(
        Connection::new(&front.url).unwrap(),
        ApiKey::parse(s.key()).unwrap(),
    );
    let spec = MissionSpec::new("How does urban heat exposure affect admissions?", 2500);
    let err = client.create_session(&spec).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Network, "{err}");
    assert!(
        err.message()
            .starts_with("The service closed the connection before answering"),
        "{err}"
    );
    assert_eq!(front.connections.load(Ordering::SeqCst), 1);
}
