//! The key store against the real OS keyring (gnome-keyring's Secret Service),
//! checked from outside with `secret-tool`. Run under scripts/with-keyring.sh
//! (make test does).

use casebook_core::ErrorCode;
use casebook_core::keys::{KeySource, KeyStore, Service};
use casebook_testsupport::keyring::{harness, secret_tool_lookup};
use std::process::Command;

fn unique_namespace() -> String {
    format!(
        "casebook-test-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

#[tokio::test]
async fn stores_reads_back_with_secret_tool_and_deletes() {
    if !harness() {
        return;
    }
    let store = KeyStore::with_namespace(unique_namespace());
    store
        .set(Service::Citations, "  cbk_live_0123456789abcdef \n")
        .await
        .expect("set");

    let seen = secret_tool_lookup(store.namespace(), "citations");
    assert_eq!(
        seen.as_deref(),
        Some("cbk_live_0123456789abcdef"),
        "the keyring holds the trimmed key"
    );

    let got = store.get(Service::Citations).await.unwrap().expect("a key");
    assert_eq!(got.expose(), "cbk_live_0123456789abcdef");
    let status = store.status(Service::Citations).await.unwrap();
    assert_eq!(status.source, KeySource::Keyring);
    assert_eq!(status.masked.as_deref(), Some("••••cdef"));
    assert_eq!(
        store.status(Service::Investigations).await.unwrap().source,
        KeySource::None
    );

    assert!(
        store.delete(Service::Citations).await.unwrap(),
        "there was a key to delete"
    );
    assert_eq!(
        secret_tool_lookup(store.namespace(), "citations"),
        None,
        "gone from the keyring"
    );
    assert!(store.get(Service::Citations).await.unwrap().is_none());
    assert!(
        !store.delete(Service::Citations).await.unwrap(),
        "deleting twice is not an error"
    );
}

#[tokio::test]
async fn a_rejected_update_keeps_the_stored_key() {
    if !harness() {
        return;
    }
    let store = KeyStore::with_namespace(unique_namespace());
    store
        .set(Service::Investigations, "first-key-value")
        .await
        .unwrap();
    let err = store.set(Service::Investigations, "   ").await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    let err = store
        .set(Service::Investigations, "two words")
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    let kept = secret_tool_lookup(store.namespace(), "investigations");
    assert_eq!(
        kept.as_deref(),
        Some("first-key-value"),
        "a failed update must not lose the key"
    );
    store
        .set(Service::Investigations, "second-key-value")
        .await
        .unwrap();
    assert_eq!(
        secret_tool_lookup(store.namespace(), "investigations").as_deref(),
        Some("second-key-value")
    );
    store.delete(Service::Investigations).await.unwrap();
}

#[tokio::test]
async fn no_secret_service_is_a_typed_error() {
    // A bus address where nothing listens: the keyring must say it is unavailable,
    // not panic or pretend there is no key.
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "probe_without_keyring",
            "--nocapture",
            "--include-ignored",
        ])
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            format!("unix:path={}/nothing", dir.path().display()),
        )
        .env("CASEBOOK_PROBE_NO_KEYRING", "1")
        .status()
        .unwrap();
    assert!(
        status.success(),
        "the probe in a process without a keyring failed"
    );
}

#[tokio::test]
#[ignore = "run by no_secret_service_is_a_typed_error in a process without a keyring"]
async fn probe_without_keyring() {
    if std::env::var_os("CASEBOOK_PROBE_NO_KEYRING").is_none() {
        return;
    }
    let store = KeyStore::with_namespace(unique_namespace());
    let err = store.get(Service::Citations).await.unwrap_err();
    assert_eq!(
        err.code(),
        ErrorCode::KeyringUnavailable,
        "{}",
        err.message()
    );
    let err = store.set(Service::Citations, "k").await.unwrap_err();
    assert_eq!(
        err.code(),
        ErrorCode::KeyringUnavailable,
        "{}",
        err.message()
    );
}
