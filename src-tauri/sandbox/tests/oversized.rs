//! A 413 must reach clients that write their whole body before reading anything,
//! as Python's urllib and requests do. These tests are such a client: a blocking
//! socket that writes the entire request, and only then reads.

mod common;

use common::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

/// The contract's limit, read as the client reads "12 MB".
const LIMIT: usize = 12_000_000;

/// Writes `head` and `body` completely, then reads the whole answer.
fn write_all_then_read(addr: SocketAddr, head: String, body: Vec<u8>) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    s.set_write_timeout(Some(PATIENCE)).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(&body).expect("the whole body is accepted");
    s.flush().unwrap();
    let mut answer = Vec::new();
    // A reset after the answer is read is fine; one before it is what this guards.
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) if !answer.is_empty() => {
                eprintln!("after the answer: {e}");
                break;
            }
            Err(e) => panic!("no answer: {e}"),
        }
        if answer.windows(4).any(|w| w == b"\r\n\r\n") && answer.ends_with(b"}") {
            break;
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

fn request_head(path: &str, key: &str, length: Option<usize>) -> String {
    let length = match length {
        Some(n) => format!("Content-Length: {n}\r\n"),
        None => "Transfer-Encoding: chunked\r\n".to_owned(),
    };
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\n{length}Connection: close\r\n\r\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_writes_the_whole_body_first_sees_the_413() {
    let sb = sandbox().await;
    let addr = sb.addr();
    let key = sb.key().to_owned();
    for path in [
        "/citations/v1/cite",
        "/citations/v1/parse",
        "/eve/v1/session",
    ] {
        let head = request_head(path, &key, Some(LIMIT + 1));
        let answer = tokio::task::spawn_blocking(move || {
            write_all_then_read(addr, head, vec![b' '; LIMIT + 1])
        })
        .await
        .unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 413 "),
            "{path}: {:.200}",
            answer
        );
        assert!(answer.contains("payload_too_large"), "{path}: {answer}");
    }
    sb.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_body_written_whole_sees_the_413_too() {
    let sb = sandbox().await;
    let addr = sb.addr();
    let head = request_head("/citations/v1/cite", sb.key(), None);
    let mut body = Vec::new();
    for _ in 0..13 {
        body.extend_from_slice(format!("{:x}\r\n", 1_000_000).as_bytes());
        body.extend(std::iter::repeat_n(b' ', 1_000_000));
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"0\r\n\r\n");
    let answer = tokio::task::spawn_blocking(move || write_all_then_read(addr, head, body))
        .await
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer:.200}");
    sb.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limit_is_exactly_12_000_000_bytes() {
    let sb = sandbox().await;
    let addr = sb.addr();
    // Exactly at the limit the body is read (and, being all spaces, is not JSON).
    let head = request_head("/citations/v1/parse", sb.key(), Some(LIMIT));
    let answer =
        tokio::task::spawn_blocking(move || write_all_then_read(addr, head, vec![b' '; LIMIT]))
            .await
            .unwrap();
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer:.300}");
    assert!(answer.contains("invalid_request"), "{answer:.300}");

    // One byte over, with a body that would otherwise be valid, is refused.
    let essay = "a".repeat(LIMIT);
    let body = serde_json::to_vec(&serde_json::json!({ "essay": essay })).unwrap();
    assert!(body.len() > LIMIT);
    let resp = client()
        .post(format!("{}/citations/v1/parse", sb.base_url()))
        .bearer_auth(sb.key())
        .header("content-type", "application/json")
        .body(body[..LIMIT + 1].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    sb.stop().await;
}
