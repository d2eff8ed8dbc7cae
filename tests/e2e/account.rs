//! Signing in to the account in the real window: the service's console (the app's
//! own sandbox) in its own window, driven through WebDriver; the panel's usage
//! growing after a cite; the session only in the keyring (read back with
//! `secret-tool`), never in the data folder or the DOM; a console window that can
//! call no command; and Sign out.

use casebook_e2e::{App, AppOptions, exclusive};
use fantoccini::Locator;
use std::process::Command;
use std::time::{Duration, Instant};

fn secret_tool(args: &[&str]) -> Option<String> {
    let out = Command::new("secret-tool")
        .args(args)
        .output()
        .expect("secret-tool (libsecret-tools) is installed");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn stored_session() -> Option<String> {
    secret_tool(&["lookup", "service", "casebook", "username", "session"])
}

async fn state(app: &App) -> String {
    app.testid("account")
        .await
        .attr("data-state")
        .await
        .unwrap()
        .unwrap_or_default()
}

async fn cite_calls(app: &App) -> f64 {
    app.wait_css("[data-testid=account-usage-row][data-name=citeCalls]")
        .await
        .attr("data-value")
        .await
        .unwrap()
        .unwrap_or_default()
        .parse()
        .unwrap()
}

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn sign_in_through_the_console_see_usage_grow_and_sign_out() {
    let _one = exclusive().await;
    if std::env::var_os("CASEBOOK_KEYRING_SESSION").is_none() {
        eprintln!("skipped: run under scripts/with-keyring.sh for the real keyring");
        return;
    }
    secret_tool(&["clear", "service", "casebook", "username", "session"]);
    let app = App::launch(AppOptions::default()).await;
    app.click("nav-settings").await;
    app.until("the panel says signed out", || async {
        state(&app).await == "signedOut"
    })
    .await;

    let main = app.client.window().await.unwrap();
    app.click("account-sign-in").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let console = loop {
        let handles = app.client.windows().await.unwrap_or_default();
        if let Some(h) = handles.into_iter().find(|h| *h != main) {
            break h;
        }
        if Instant::now() > deadline {
            let err = match app
                .client
                .find(Locator::Css("[data-testid=account-error]"))
                .await
            {
                Ok(e) => e.text().await.unwrap_or_default(),
                Err(_) => "no error shown".into(),
            };
            panic!("the console window did not open: {err}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    app.client.switch_to_window(console).await.unwrap();
    let email = app.wait_css("#email").await;

    // Remote content: no command answers it.
    let ipc = app
        .client
        .execute_async(
            r#"const done = arguments[arguments.length - 1];
               const t = window.__TAURI_INTERNALS__;
               if (!t || typeof t.invoke !== "function") { done("no ipc"); return; }
               t.invoke("app_info").then(() => done("allowed"), (e) => done("denied: " + String(e)));"#,
            vec![],
        )
        .await
        .unwrap();
    let ipc = ipc.as_str().unwrap_or_default().to_owned();
    assert_ne!(ipc, "allowed", "the console window called a command");
    let ipc = app
        .client
        .execute_async(
            r#"const done = arguments[arguments.length - 1];
               fetch("http://ipc.localhost/app_info", {method: "POST", body: "{}"})
                 .then((r) => r.text().then((t) => done(r.status + " " + t)), (e) => done("failed: " + String(e)));"#,
            vec![],
        )
        .await
        .unwrap();
    let ipc = ipc.as_str().unwrap_or_default().to_owned();
    assert!(
        !ipc.contains("\"version\""),
        "the console window reached app_info: {ipc}"
    );

    email.send_keys("e2e@example.org").await.unwrap();
    app.client
        .find(Locator::Css("#password"))
        .await
        .unwrap()
        .send_keys("any password")
        .await
        .unwrap();
    app.client
        .find(Locator::Css("#sign-in"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();

    // The window closes by itself once the session is kept.
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.client.windows().await.unwrap_or_default().len() > 1 {
        assert!(
            Instant::now() < deadline,
            "the console window did not close"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    app.client.switch_to_window(main).await.unwrap();
    app.until("the panel shows the account", || async {
        state(&app).await == "signedIn"
    })
    .await;
    let who = app.testid("account-who").await.text().await.unwrap();
    assert!(who.contains("e2e@example.org"), "{who}");
    assert!(
        !app.all_css("[data-testid=account-key-row]")
            .await
            .is_empty()
    );
    let before = cite_calls(&app).await;

    let stored = stored_session().expect("the session is in the keyring");
    let token = stored
        .split("cb_session=")
        .nth(1)
        .and_then(|t| t.split(['"', ';', ' ']).next())
        .expect("the console's cookie is stored")
        .to_owned();
    assert!(token.len() >= 16, "{stored}");

    // Cite something, then Refresh: usage counts it.
    app.click("nav-cite").await;
    let summary = app.wait_css("details.essay summary").await;
    app.press(&summary, "the essay summary").await;
    app.testid("essay-input")
        .await
        .send_keys("Cities are warmer than their surroundings.\n\nTrees cool streets measurably.")
        .await
        .unwrap();
    app.click("cite-button").await;
    app.until("the pasted text is cited", || async {
        !app.all_css("[data-testid=doc-card][data-path=essay][data-state=cited]")
            .await
            .is_empty()
    })
    .await;
    app.click("nav-settings").await;
    app.until("the panel shows the account again", || async {
        state(&app).await == "signedIn"
    })
    .await;
    app.click("account-refresh").await;
    app.until("usage grows after the cite", || async {
        cite_calls(&app).await > before
    })
    .await;

    // The session is nowhere but the keyring.
    let source = app.client.source().await.unwrap();
    assert!(!source.contains(&token), "the session reached the DOM");
    for file in files_under(app.data_dir()) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(&token),
            "{} holds the session",
            file.display()
        );
    }

    app.click("account-sign-out").await;
    app.until("the panel says signed out", || async {
        state(&app).await == "signedOut"
    })
    .await;
    assert_eq!(stored_session(), None, "Sign out removes the session");
    app.close().await;
}
