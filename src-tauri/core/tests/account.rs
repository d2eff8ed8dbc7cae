//! The account endpoint against the sandbox: signing in with the console's cookies,
//! usage that counts real calls, expiry, and the session kept only in the keyring
//! (checked with `secret-tool`) and bound to the origin that issued it.

mod common;

use casebook_core::ErrorCode;
use casebook_core::account::{self, AccountView, Me};
use casebook_core::app::{BackendChoice, Casebook, Config};
use casebook_core::backend::{Backend, SandboxOptions};
use casebook_core::citations::client::{CitationClient, Input, no_progress};
use casebook_core::keys::SessionCookie;
use casebook_core::keys::{ApiKey, KeyStore, SESSION_ENTRY};
use casebook_core::missions::follower::Quiet;
use casebook_core::net::connection::Connection;
use casebook_testsupport::keyring::{harness, secret_tool_lookup};
use common::cite_defaults;
use std::sync::Arc;

/// Signs in through the sandbox console's form, as a browser would; returns the
/// `Cookie` header value its answer set.
async fn console_sign_in(base: &str, email: &str) -> String {
    let resp = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{base}/console/sign-in"))
        .form(&[("email", email), ("password", "secret")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 303);
    resp.headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("; ")
}

fn usage(account: &account::Account, name: &str) -> f64 {
    account
        .usage
        .iter()
        .find(|u| u.name == name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", account.usage))
        .value
}

#[tokio::test]
async fn the_account_endpoint_reads_the_console_session_and_counts_real_calls() {
    let sandbox = casebook_sandbox::start(Default::default()).await.unwrap();
    let conn = Connection::new(sandbox.base_url()).unwrap();
    let cookie =
        SessionCookie::parse(&console_sign_in(sandbox.base_url(), "ada@example.org").await)
            .unwrap();

    let Me::Account(before) = account::fetch(&conn, &cookie).await.unwrap() else {
        panic!("the console's cookie is a session");
    };
    assert_eq!(before.email.as_deref(), Some("ada@example.org"));
    assert!(before.has_key_list && !before.keys.is_empty());
    let masked = before.keys[0].masked.as_deref().unwrap();
    assert!(!masked.contains(&sandbox.key()[..8]), "{masked}");

    let client = CitationClient::new(conn.clone(), ApiKey::parse(sandbox.key()).unwrap());
    cite_defaults(
        &client,
        &Input::essay("One paragraph.\n\nAnother.").unwrap(),
        &no_progress,
    )
    .await
    .unwrap();
    let Me::Account(after) = account::fetch(&conn, &cookie).await.unwrap() else {
        panic!("still signed in");
    };
    assert_eq!(
        usage(&after, "citeCalls"),
        usage(&before, "citeCalls") + 1.0
    );

    let stale = SessionCookie::parse("cb_session=not-a-session-0123456789").unwrap();
    match account::fetch(&conn, &stale).await.unwrap() {
        Me::Unauthorized(said) => {
            assert!(!said.unwrap_or_default().contains("0123456789"));
        }
        other => panic!("a stale cookie is unauthorized, not {other:?}"),
    }
    sandbox.stop().await;
}

#[tokio::test]
async fn sign_in_keeps_the_session_in_the_keyring_only_for_its_origin() {
    if !harness() {
        return;
    }
    let sandbox = casebook_sandbox::start(Default::default()).await.unwrap();
    let data = tempfile::tempdir().unwrap();
    let config = Config {
        data_dir: data.path().to_owned(),
        backend: BackendChoice::Fixed(Some(Box::new(Backend::remote(sandbox.base_url()).unwrap()))),
        sandbox: SandboxOptions::default(),
        test_hooks: false,
    };
    let mut core = Casebook::start(config, Arc::new(Quiet)).await.unwrap();
    let namespace = format!("casebook-test-account-{}", std::process::id());
    Arc::get_mut(&mut core).unwrap().keys = KeyStore::with_namespace(&namespace);

    assert_eq!(core.account().await.unwrap(), AccountView::SignedOut);
    // Before the person signs in, the console's cookies are not a session: nothing is kept.
    let err = core.sign_in_with_cookies("theme=dark").await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unauthorized);
    assert_eq!(secret_tool_lookup(&namespace, SESSION_ENTRY), None);
    assert_eq!(
        core.sign_in_with_cookies("not a cookie")
            .await
            .unwrap_err()
            .code(),
        ErrorCode::InvalidInput
    );

    let cookie = console_sign_in(sandbox.base_url(), "grace@example.org").await;
    let view = core.sign_in_with_cookies(&cookie).await.unwrap();
    assert!(matches!(view, AccountView::SignedIn { .. }), "{view:?}");
    let stored = secret_tool_lookup(&namespace, SESSION_ENTRY).expect("the session is stored");
    assert!(stored.contains(&cookie), "{stored}");
    assert!(
        stored.contains(sandbox.base_url()),
        "bound to its origin: {stored}"
    );
    match core.account().await.unwrap() {
        AccountView::SignedIn { account, .. } => {
            assert_eq!(account.email.as_deref(), Some("grace@example.org"))
        }
        other => panic!("signed in, not {other:?}"),
    }
    // Nothing of it in the data folder.
    let token = cookie.split('=').nth(1).unwrap();
    for entry in walk(data.path()) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(token),
            "{} holds the session",
            entry.display()
        );
    }

    // The session ends at the service: the view says expired, not an error.
    reqwest::Client::new()
        .post(format!("{}/console/sign-out", sandbox.base_url()))
        .header(reqwest::header::COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    match core.account().await.unwrap() {
        AccountView::Expired { message, .. } => {
            assert!(message.contains("sign in again"), "{message}")
        }
        other => panic!("expired, not {other:?}"),
    }

    assert_eq!(core.sign_out().await.unwrap(), AccountView::SignedOut);
    assert_eq!(secret_tool_lookup(&namespace, SESSION_ENTRY), None);

    // A session issued by another origin is never sent to this one.
    let other = KeyStore::with_namespace(&namespace);
    other
        .set_session(
            "http://127.0.0.1:9",
            &SessionCookie::parse(&cookie).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(core.account().await.unwrap(), AccountView::SignedOut);
    other.delete_session().await.unwrap();
    core.shutdown().await;
    sandbox.stop().await;
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
