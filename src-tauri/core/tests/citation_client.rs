//! The citation client against the real sandbox over loopback HTTP, with faults.

mod common;

use casebook_core::ErrorCode;
use casebook_core::citations::client::{
    CitationClient, CiteOptions, Input, Mode, OutputKind, Upload, ValidOptions, no_progress,
};
use casebook_core::citations::documents::{self, DocKind};
use casebook_core::keys::ApiKey;
use casebook_core::net::connection::Connection;
use casebook_core::net::http::{Progress, RetryPolicy};
use casebook_sandbox::{Failure, RunningSandbox, SandboxConfig, start};
use common::{citation_client, cite_defaults};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn data(rel: &str) -> Vec<u8> {
    casebook_testsupport::files::fixture_bytes(rel)
}

async fn setup() -> (RunningSandbox, CitationClient) {
    let s = start(SandboxConfig::default()).await.unwrap();
    let client = citation_client(&s);
    (s, client)
}

#[tokio::test]
async fn parses_and_cites_each_kind() {
    let (_s, client) = setup().await;
    let docx = data("docx/tracked-changes-hyperlinks.docx");
    let parsed = client
        .parse(&Input::document(&docx).unwrap(), &no_progress)
        .await
        .unwrap();
    assert!(!parsed.paragraphs.is_empty());
    assert_eq!(
        parsed.extra["kind"], "docx",
        "fields beyond the contract are kept"
    );

    let pptx = data("pptx/lecture-bullets-urls-embedded-zip.pptx");
    let input = Input::document(&pptx).unwrap();
    let opts = CiteOptions {
        mode: Mode::Every,
        min_citations: 1,
        max_citations: 1,
        seed: Some(3),
    }
    .validated()
    .unwrap();
    let cited = client.cite(&input, &opts, &no_progress).await.unwrap();
    assert_eq!(cited.kind, OutputKind::Pptx);
    assert_eq!(documents::sniff(&cited.bytes).unwrap(), DocKind::Pptx);
    assert_ne!(cited.bytes, pptx, "the deck was rewritten");
    let again = client
        .parse(&Input::document(&cited.bytes).unwrap(), &no_progress)
        .await
        .unwrap();
    assert!(
        !again.references.is_empty(),
        "the cited deck has references"
    );

    let essay = "A paragraph long enough to be cited by the sandbox service.\n\nAnother one, also long enough to cite.";
    let cited = client
        .cite(&Input::essay(essay).unwrap(), &opts, &no_progress)
        .await
        .unwrap();
    assert_eq!(cited.kind, OutputKind::Text);
    assert!(
        String::from_utf8(cited.bytes)
            .unwrap()
            .contains("References")
    );
}

#[tokio::test]
async fn a_wrong_key_is_unauthorized_and_never_echoed() {
    let s = start(SandboxConfig::default()).await.unwrap();
    let secret = "cbk_wrong_0123456789abcdef";
    let client = CitationClient::new(
        Connection::new(s.base_url()).unwrap(),
        ApiKey::parse(secret).unwrap(),
    );
    let err = client
        .parse(&Input::essay("x").unwrap(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unauthorized);
    assert_eq!(err.status(), Some(401));
    let shown = format!(
        "{err} {err:?} {client:?} {}",
        serde_json::to_string(&err).unwrap()
    );
    assert!(!shown.contains(secret), "the key leaked: {shown}");
}

#[tokio::test]
async fn a_429_storm_is_waited_out_with_a_countdown() {
    let (s, client) = setup().await;
    s.knobs().set(|k| {
        k.storm = casebook_sandbox::knobs::Storm {
            count: 2,
            retry_after: 1,
        }
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let progress = move |p: Progress| log.lock().unwrap().push(p);
    let started = Instant::now();
    let parsed = client
        .parse(&Input::essay("Some text here.").unwrap(), &progress)
        .await
        .unwrap();
    assert!(!parsed.paragraphs.is_empty());
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "each Retry-After: 1 was waited out"
    );
    let waits: Vec<Progress> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|p| matches!(p, Progress::RateLimited { .. }))
        .cloned()
        .collect();
    assert_eq!(
        waits,
        vec![
            Progress::RateLimited {
                seconds: 1,
                attempt: 1,
                of: 3
            },
            Progress::RateLimited {
                seconds: 1,
                attempt: 2,
                of: 3
            },
        ]
    );
}

#[tokio::test]
async fn a_429_storm_longer_than_the_retries_is_rate_limited() {
    let (s, client) = setup().await;
    let client = client.with_retry(RetryPolicy {
        max_retries: 1,
        max_wait: Duration::from_secs(5),
    });
    s.knobs().set(|k| {
        k.storm = casebook_sandbox::knobs::Storm {
            count: 10,
            retry_after: 1,
        }
    });
    let err = client
        .parse(&Input::essay("x").unwrap(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::RateLimited);
    assert_eq!(err.retry_after_secs(), Some(1));
    // A Retry-After beyond what we wait is handed to the caller at once.
    s.knobs().set(|k| {
        k.storm = casebook_sandbox::knobs::Storm {
            count: 1,
            retry_after: 3600,
        }
    });
    let started = Instant::now();
    let err = client
        .parse(&Input::essay("x").unwrap(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::RateLimited);
    assert_eq!(err.retry_after_secs(), Some(3600));
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[tokio::test]
async fn server_errors_malformed_answers_and_slow_drips() {
    let (s, client) = setup().await;
    s.knobs().set(|k| {
        k.fail = Some(casebook_sandbox::knobs::Fail {
            nth: 1,
            kind: Failure::Status500,
        })
    });
    let err = client
        .parse(&Input::essay("x").unwrap(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!((err.code(), err.status()), (ErrorCode::Server, Some(500)));

    s.knobs().set(|k| {
        k.fail = Some(casebook_sandbox::knobs::Fail {
            nth: 1,
            kind: Failure::MalformedJson,
        })
    });
    let err = cite_defaults(&client, &Input::essay("x").unwrap(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Protocol);

    s.knobs().set(|k| k.slow_drip_ms = 5);
    let docx = data("docx/hyperlink-fragments.docx");
    let cited = cite_defaults(&client, &Input::document(&docx).unwrap(), &no_progress)
        .await
        .unwrap();
    assert_eq!(
        cited.kind,
        OutputKind::Docx,
        "a body that arrives in drips is read whole"
    );
}

#[tokio::test]
async fn no_key_follows_a_redirect_to_another_origin() {
    use axum::http::HeaderMap;
    use axum::response::Redirect;
    use axum::routing::{any, post};
    // The "other origin": records any Authorization header it is sent.
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let other = axum::Router::new().route(
        "/{*rest}",
        any(move |headers: HeaderMap| {
            let record = record.clone();
            async move {
                if let Some(v) = headers.get("authorization") {
                    record
                        .lock()
                        .unwrap()
                        .push(v.to_str().unwrap_or("").to_owned());
                }
                "{}"
            }
        }),
    );
    let other_url = common::serve(other).await;
    let target = format!("{other_url}/citations/v1/parse");
    let redirector = axum::Router::new().route(
        "/citations/v1/parse",
        post(move || async move { Redirect::temporary(&target) }),
    );
    let url = common::serve(redirector).await;

    let client = CitationClient::new(
        Connection::new(&url).unwrap(),
        ApiKey::parse("cbk_secret_key").unwrap(),
    );
    let err = client
        .parse(&Input::essay("x").unwrap(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Protocol, "{}", err.message());
    assert!(
        seen.lock().unwrap().is_empty(),
        "the key reached another origin: {:?}",
        seen.lock().unwrap()
    );
}

/// A real document with `extra` bytes of padding beside its parts, stored as they are:
/// large enough that its body is still being written when a refusal comes back.
fn padded_docx(extra: usize) -> Vec<u8> {
    casebook_testsupport::files::padded(&data("docx/headings-lorem-multirun.docx"), extra)
}

/// An 8 MB document written to a file, and its bytes: large enough that its body is
/// still being sent when the service answers. The directory goes when the guard does.
fn large_docx() -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.docx");
    let bytes = padded_docx(8 << 20);
    std::fs::write(&path, &bytes).unwrap();
    (dir, path, bytes)
}

/// Cites the document at `path` (its `bytes`) streamed from its file, or in memory.
async fn cite_either_way(
    client: &CitationClient,
    path: &std::path::Path,
    bytes: &[u8],
    streamed: bool,
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> casebook_core::Result<OutputKind> {
    let options = ValidOptions::default();
    if streamed {
        let doc = documents::open_file(path).unwrap();
        let out = tempfile::tempfile().unwrap();
        client
            .cite_into(Upload::Document(&doc), &options, progress, out)
            .await
            .map(|c| c.kind)
    } else {
        client
            .cite(&Input::document(bytes).unwrap(), &options, progress)
            .await
            .map(|c| c.kind)
    }
}

/// A large cite turned away with 429s, by a service that answers from the headers
/// and closes under the body still arriving (the close may beat the answer: see
/// `hang_ups.rs` for that made certain) and by one that reads the body first. Either
/// way the cite goes through, in memory and streamed from its file.
#[tokio::test]
async fn a_refusal_before_the_body_is_read_is_waited_out() {
    let (s, client) = setup().await;
    let (_dir, path, bytes) = large_docx();
    for read_refused in [false, true] {
        for streamed in [false, true] {
            s.knobs().set(|k| k.read_refused = read_refused);
            s.knobs().set(|k| {
                k.storm = casebook_sandbox::knobs::Storm {
                    count: 2,
                    retry_after: 1,
                }
            });
            let seen = Arc::new(Mutex::new(Vec::new()));
            let log = seen.clone();
            let progress = move |p: Progress| log.lock().unwrap().push(p);
            let kind = cite_either_way(&client, &path, &bytes, streamed, &progress).await;
            let case = format!("read_refused {read_refused}, streamed {streamed}");
            assert_eq!(kind.expect(&case), OutputKind::Docx, "{case}");
            let attempts: Vec<u32> = seen
                .lock()
                .unwrap()
                .iter()
                .filter_map(|p| match p {
                    Progress::RateLimited {
                        seconds, attempt, ..
                    } => {
                        // Read to its end, the 429 itself arrives: its Retry-After is kept.
                        assert!(!read_refused || *seconds == 1, "{case}: {p:?}");
                        Some(*attempt)
                    }
                    _ => None,
                })
                .collect();
            assert_eq!(attempts.first(), Some(&1), "{case}: {attempts:?}");
            assert_eq!(attempts.last(), Some(&2), "{case}: {attempts:?}");
        }
    }
}

/// Turned away for good (a wrong key) with the connection closed under the body, the
/// cite ends with the service's answer or with what happened to the connection.
#[tokio::test]
async fn a_wrong_key_on_a_large_document_is_not_sent_forever() {
    let s = start(SandboxConfig::default()).await.unwrap();
    let client = CitationClient::new(
        Connection::new(s.base_url()).unwrap(),
        ApiKey::parse("cbk_wrong_0123456789abcdef").unwrap(),
    )
    .with_retry(RetryPolicy {
        max_retries: 1,
        max_wait: Duration::from_secs(5),
    });
    let doc = padded_docx(8 << 20);
    let input = Input::document(&doc).unwrap();
    let err = client
        .cite(&input, &ValidOptions::default(), &no_progress)
        .await
        .unwrap_err();
    match err.code() {
        ErrorCode::Unauthorized => {}
        ErrorCode::Network => assert!(
            err.message()
                .starts_with("The service closed the connection before answering")
                && err.message().ends_with("Gave up after 2 attempts."),
            "{err}"
        ),
        other => panic!("{other}: {err}"),
    }
    s.knobs().set(|k| k.read_refused = true);
    let err = client
        .cite(&input, &ValidOptions::default(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unauthorized, "{err}");
}

/// A service that takes a large document in and then fails at it (a 500, or a 200 that
/// is not JSON) is reported as that failure, every time, in memory and streamed from
/// its file: not sent again as though the connection had closed under it, which would
/// make the failure land by timing.
#[tokio::test]
async fn a_large_document_that_fails_on_the_service_reports_that_failure() {
    let (s, client) = setup().await;
    let (_dir, path, bytes) = large_docx();
    for streamed in [false, true] {
        for (failure, want) in [
            (Failure::Status500, ErrorCode::Server),
            (Failure::MalformedJson, ErrorCode::Protocol),
        ] {
            s.knobs().set(|k| {
                k.fail = Some(casebook_sandbox::knobs::Fail {
                    nth: 1,
                    kind: failure,
                })
            });
            let got = cite_either_way(&client, &path, &bytes, streamed, &no_progress).await;
            let err = got.expect_err(&format!("{failure:?}, streamed {streamed}"));
            assert_eq!(err.code(), want, "{failure:?}, streamed {streamed}: {err}");
        }
    }
}

/// A cite that takes a while says where it is: sent, then how long the service has
/// worked on it, then receiving.
#[tokio::test]
async fn a_slow_cite_says_it_is_waiting_for_the_service_with_the_time_so_far() {
    let (s, client) = setup().await;
    s.knobs().set(|k| k.latency_ms = 3300);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.docx");
    let bytes = data("docx/long-lorem-endnote.docx");
    std::fs::write(&path, &bytes).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = seen.clone();
    let progress = move |p: Progress| keep.lock().unwrap().push(p);
    cite_either_way(&client, &path, &bytes, true, &progress)
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    let waits: Vec<u64> = seen
        .iter()
        .filter_map(|p| match p {
            Progress::Waiting { seconds } => Some(*seconds),
            _ => None,
        })
        .collect();
    assert!(matches!(seen[0], Progress::Sending { .. }), "{seen:?}");
    assert!(
        waits.contains(&0) && waits.contains(&2),
        "counted up by the second: {seen:?}"
    );
    assert!(
        waits.windows(2).all(|w| w[0] < w[1]),
        "each second once: {waits:?}"
    );
    assert!(matches!(seen.last(), Some(Progress::Receiving)), "{seen:?}");
    s.stop().await;
}

/// A slow cite can be cancelled while it sends, while the service works on it, and while
/// its answer arrives: each time the job ends as cancelled and nothing of it is kept (the
/// answer was going into an unnamed temporary file, which goes with it).
#[tokio::test]
async fn a_cancel_in_each_phase_of_a_slow_cite_keeps_nothing() {
    use casebook_core::citations::jobs::{CiteJobs, CiteProgress, CiteSource};
    let (_dir, path, _) = large_docx();
    for phase in ["sending", "waiting", "receiving"] {
        let (s, client) = setup().await;
        match phase {
            // Held before the service reads the body: the upload stalls part way.
            "sending" => s.knobs().set(|k| k.latency_ms = 5_000),
            "waiting" => s.knobs().set(|k| {
                k.citations = casebook_sandbox::CiteVariants {
                    slow_cite_ms: 5000,
                    ..Default::default()
                }
            }),
            _ => s.knobs().set(|k| k.slow_drip_ms = 20),
        }
        let jobs = Arc::new(CiteJobs::default());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let running = jobs.clone();
        let source = CiteSource::Document { path: path.clone() };
        let run = tokio::spawn(async move {
            running
                .run(client, source, ValidOptions::default(), move |p| {
                    let _ = tx.send(p);
                })
                .await
        });
        let mut job = None;
        while let Some(p) = rx.recv().await {
            match (&p, phase) {
                (CiteProgress::Queued { job_id }, _) => job = Some(job_id.clone()),
                (CiteProgress::Uploading { sent, of }, "sending") if sent < of => break,
                (CiteProgress::Waiting { .. }, "waiting") => break,
                (CiteProgress::Receiving, "receiving") => break,
                _ => {}
            }
        }
        assert!(
            jobs.cancel(job.as_deref().unwrap()),
            "{phase}: cancelled in flight"
        );
        let err = run.await.unwrap().unwrap_err();
        assert_eq!(err.code(), ErrorCode::Cancelled, "{phase}: {err:?}");
        assert_eq!(jobs.held(), 0, "{phase}: nothing kept");
        s.stop().await;
    }
}
