//! The service's console in a window of its own, for signing in to the account.
//!
//! The console is remote content: its window has no capability (so no command
//! answers it), keeps no data between openings (incognito), and navigates only
//! within the service's origin. Casebook never sees the password: it watches the
//! window's cookies for the service's origin and, as soon as the account endpoint
//! accepts them, core keeps them in the keyring and the window closes.

use crate::opener;
use casebook_core::Error;
use casebook_core::app::Casebook;
use std::sync::Arc;
use std::time::Duration;
use tauri::{
    AppHandle, Emitter, Manager, Runtime, WebviewUrl, WebviewWindow, WebviewWindowBuilder,
};
use url::{Origin, Url};

/// The console window's label: matched by no capability's `windows` list.
pub const LABEL: &str = "console";
/// Tells the main window the account changed (signed in from the console).
pub const ACCOUNT_EVENT: &str = "account-changed";

const POLL: Duration = Duration::from_millis(500);

/// Only the service's own pages load in the console; other web links go to the
/// system browser, anything else nowhere.
fn allow_navigation(origin: &Origin, url: &Url) -> bool {
    if url.origin() == *origin {
        return true;
    }
    if matches!(url.scheme(), "http" | "https") {
        let _ = opener::open_url(url.as_str());
    }
    false
}

/// Opens the console at `base_url` (or brings it forward) and signs in from it.
pub fn open<R: Runtime>(
    app: &AppHandle<R>,
    core: Arc<Casebook>,
    base_url: &str,
) -> Result<(), Error> {
    if let Some(w) = app.get_webview_window(LABEL) {
        let _ = w.unminimize();
        let _ = w.show();
        let _ = w.set_focus();
        return Ok(());
    }
    let url = Url::parse(base_url)
        .map_err(|e| Error::invalid_input(format!("{base_url:?} is not a web address: {e}.")))?;
    let origin = url.origin();
    let window = WebviewWindowBuilder::new(app, LABEL, WebviewUrl::External(url.clone()))
        .title("Sign in to the citation service · Casebook")
        .inner_size(520.0, 720.0)
        // Incognito keeps the console's cookies off disk. WebKitWebDriver can drive only
        // the persistent context, so test builds use it (and the cookies are deleted
        // below in every build).
        .incognito(!cfg!(feature = "test-hooks"))
        .disable_drag_drop_handler()
        .on_navigation(move |u| allow_navigation(&origin, u))
        .build()
        .map_err(|e| Error::internal(format!("Cannot open the sign-in window: {e}")))?;
    tauri::async_runtime::spawn(watch(app.clone(), window, core, url));
    Ok(())
}

/// Offers the console's cookies to core until the account endpoint accepts them,
/// or the window is closed.
async fn watch<R: Runtime>(
    app: AppHandle<R>,
    window: WebviewWindow<R>,
    core: Arc<Casebook>,
    url: Url,
) {
    let mut sign_in = casebook_core::app::ConsoleSignIn::default();
    loop {
        tokio::time::sleep(POLL).await;
        if app.get_webview_window(LABEL).is_none() {
            return;
        }
        let (w, u) = (window.clone(), url.clone());
        // The runtime answers on its event loop; wait for it off the async workers.
        let Ok(Ok(cookies)) = tokio::task::spawn_blocking(move || w.cookies_for_url(u)).await
        else {
            continue;
        };
        let pairs = cookies
            .iter()
            .map(|c| (c.name().to_owned(), c.value().to_owned()));
        if sign_in.offer(&core, pairs).await {
            // Core has the session now; the web view keeps no copy.
            for c in cookies {
                let _ = window.delete_cookie(c);
            }
            let _ = window.close();
            let _ = app.emit_to("main", ACCOUNT_EVENT, ());
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_console_stays_on_the_service_origin() {
        let origin = Url::parse("http://127.0.0.1:4000/").unwrap().origin();
        let ok = |s: &str| allow_navigation(&origin, &Url::parse(s).unwrap());
        assert!(ok("http://127.0.0.1:4000/console"));
        assert!(ok("http://127.0.0.1:4000/console/sign-in?x=1"));
        assert!(!ok("file:///etc/passwd"));
        assert!(!ok("javascript:alert(1)"));
        assert!(!ok("tauri://localhost/index.html"));
    }
}
