//! The real OS keyring for tests: whether the suite runs inside the keyring harness
//! (`scripts/with-keyring.sh`: gnome-keyring under a private D-Bus session), and what the
//! keyring holds, read from outside Casebook with `secret-tool`.

use std::process::Command;

/// Under the keyring harness, or skipped with a note outside CI. In CI a missing
/// harness is a failure, not a skip.
pub fn harness() -> bool {
    if std::env::var_os("CASEBOOK_KEYRING_SESSION").is_some() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "keyring tests must run under scripts/with-keyring.sh in CI"
    );
    eprintln!("skipped: run under scripts/with-keyring.sh for the real keyring");
    false
}

/// What the keyring holds for `namespace` and `user`, as `secret-tool` reads it.
pub fn secret_tool_lookup(namespace: &str, user: &str) -> Option<String> {
    let out = Command::new("secret-tool")
        .args(["lookup", "service", namespace, "username", user])
        .output()
        .expect("secret-tool (libsecret-tools) is installed");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}
