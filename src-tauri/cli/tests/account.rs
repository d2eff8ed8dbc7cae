//! `casebook account` against a sandbox this test starts: signed in through the
//! console's form, with the session given in CASEBOOK_SESSION_COOKIE.

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_casebook");

fn casebook(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("CASEBOOK_BASE_URL")
        .env_remove("CASEBOOK_SESSION_COOKIE")
        .env("CASEBOOK_DATA_DIR", tempfile::tempdir().unwrap().keep())
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Posts the console's sign-in form as a browser would, over plain HTTP; returns the
/// cookie its answer set.
fn console_sign_in(addr: std::net::SocketAddr, email: &str) -> String {
    let body = format!("email={}&password=pw", email.replace('@', "%40"));
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST /console/sign-in HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 303"), "{answer}");
    answer
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("set-cookie:")
                .then(|| l[11..].trim().split(';').next().unwrap().to_owned())
        })
        .expect("the form sets a cookie")
}

#[tokio::test(flavor = "multi_thread")]
async fn account_prints_the_signed_in_account_its_usage_and_keys() {
    let sandbox = casebook_sandbox::start(Default::default()).await.unwrap();
    let base = sandbox.base_url().to_owned();
    let addr = sandbox.addr();
    let cookie = tokio::task::spawn_blocking(move || console_sign_in(addr, "lin@example.org"))
        .await
        .unwrap();
    let token = cookie.split('=').nth(1).unwrap().to_owned();

    let run = |args: Vec<String>, env: Vec<(String, String)>| {
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            casebook(&args, &env)
        })
    };
    let session = vec![("CASEBOOK_SESSION_COOKIE".to_owned(), cookie.clone())];
    let args = |extra: &[&str]| {
        let mut a = vec!["account".to_owned(), "--base-url".to_owned(), base.clone()];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };

    let out = run(args(&[]), session.clone()).await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("lin@example.org"), "{text}");
    assert!(text.contains("Cite calls"), "{text}");
    assert!(
        text.contains("Sandbox key") && text.contains("••••"),
        "{text}"
    );
    assert!(!text.contains(&token) && !String::from_utf8_lossy(&out.stderr).contains(&token));

    // Usage counts real calls.
    let client = casebook_core::citations::client::CitationClient::new(
        casebook_core::net::connection::Connection::new(&base).unwrap(),
        casebook_core::keys::ApiKey::parse(sandbox.key()).unwrap(),
    );
    client
        .cite(
            &casebook_core::citations::client::Input::essay("A paragraph.").unwrap(),
            &Default::default(),
            &casebook_core::citations::client::no_progress,
        )
        .await
        .unwrap();
    let out = run(args(&["--json"]), session.clone()).await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["email"], "lin@example.org", "{json}");
    let cite_calls = json["usage"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["name"] == "citeCalls")
        .unwrap()["value"]
        .as_f64();
    assert_eq!(cite_calls, Some(1.0), "{json}");
    assert!(json["raw"].as_str().unwrap().contains("lin@example.org"));

    // A session the service does not know: expired, exit 3, and the cookie is not echoed.
    let stale = vec![(
        "CASEBOOK_SESSION_COOKIE".to_owned(),
        "cb_session=0000stale0000".to_owned(),
    )];
    let out = run(args(&[]), stale).await.unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sign in again") && !err.contains("0000stale0000"),
        "{err}"
    );

    // A malformed one is refused before anything is sent.
    let bad = vec![("CASEBOOK_SESSION_COOKIE".to_owned(), "no pairs".to_owned())];
    let out = run(args(&[]), bad).await.unwrap();
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // No service named: the usual message.
    let out = run(vec!["account".into()], session).await.unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--base-url"));
    sandbox.stop().await;
}
