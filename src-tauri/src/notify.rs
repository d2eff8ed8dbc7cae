//! Desktop notifications, best effort: a missing notification daemon (or D-Bus)
//! is logged and otherwise ignored.
//!
//! Test builds (`test-hooks`): `CASEBOOK_NOTIFY_LOG` appends each notification to
//! this file as a JSON line instead of showing it.

pub fn notify(summary: String, body: String) {
    tracing::debug!("notification: {summary}");
    #[cfg(feature = "test-hooks")]
    if let Some(path) = std::env::var_os("CASEBOOK_NOTIFY_LOG") {
        use std::io::Write;
        let line = serde_json::json!({"summary": summary, "body": body}).to_string();
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = written {
            tracing::warn!("cannot write the notification log: {e}");
        }
        return;
    }
    // Showing one is a blocking D-Bus round trip that can take the bus's whole timeout
    // when no daemon answers: keep it off the async runtime.
    std::thread::spawn(move || {
        let shown = notify_rust::Notification::new()
            .appname("Casebook")
            .summary(&summary)
            .body(&body)
            .show();
        if let Err(e) = shown {
            tracing::info!("no desktop notification shown ({e})");
        }
    });
}
