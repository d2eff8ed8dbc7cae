//! Approvals and sign-ins in the real window, against the app's sandbox (its `approval`,
//! `signIn` and `signInSuperseded` knobs) in eve 27 and B: an approval's buttons in the
//! server's styles, clicked, and the call going on (or withdrawn by a message, said before
//! it is sent); a sign-in card whose button goes to the app's opener, whose code and
//! countdown show, and whose turn resumes to the report once the test visits the link the
//! opener was given, with nothing POSTed for it. And a reply that attaches a document picked
//! in the composer: the file as the service received it, and shown on the sent message.

use crate::missions::{sandbox_faults, start_in_window, status, until_for};
use casebook_e2e::{App, AppOptions, exclusive};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const KEY: &str = "cbx_sandbox_demo_key";

fn options(env: Vec<(String, String)>) -> AppOptions {
    let mut all = vec![
        (
            "CASEBOOK_SANDBOX_MISSION_PACE_MS".to_owned(),
            "20".to_owned(),
        ),
        (
            "CASEBOOK_SANDBOX_MISSION_EVENTS".to_owned(),
            "60".to_owned(),
        ),
    ];
    all.extend(env);
    AppOptions {
        env: all,
        ..Default::default()
    }
}

/// A stand-in for the system opener that logs what it is asked to open.
fn opener_script(dir: &Path) -> (PathBuf, PathBuf) {
    let log = dir.join("opened.txt");
    let script = dir.join("opener.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n", log.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (script, log)
}

async fn sandbox_base(app: &App) -> String {
    app.click("nav-settings").await;
    app.text("settings-active-url").await.trim().to_owned()
}

/// The mission window's session: its URL ends `#/mission/<id>`.
async fn session_id(app: &App) -> String {
    let url = app.client.current_url().await.unwrap();
    let id = url
        .fragment()
        .unwrap_or_default()
        .trim_start_matches("/mission/");
    assert!(id.starts_with("ses_"), "{url}");
    id.to_owned()
}

/// Every POST the sandbox's session received after its create, each body without the
/// `idempotencyKey` a follow-up to eve 1.x (stream 27) carries.
async fn posts(base: &str, sid: &str) -> Vec<Value> {
    let v: Value = reqwest::Client::new()
        .get(format!("{base}/_sandbox/posts?sessionId={sid}"))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut posts = v["posts"].as_array().unwrap().clone();
    for p in &mut posts {
        if let Some(body) = p["body"].as_object_mut() {
            body.remove("idempotencyKey");
        }
    }
    posts
}

async fn attr(app: &App, css: &str, name: &str) -> Option<String> {
    app.wait_css(css).await.attr(name).await.ok().flatten()
}

/// Scrolls the conversation to its first item (the window keeps only the newest while it
/// follows) and gives the text of the first element `css` matches there.
pub(crate) async fn first_text(app: &App, css: &str) -> String {
    let found = std::sync::Mutex::new(String::new());
    let text = &found;
    until_for(30, css, || async move {
        let v = app
            .client
            .execute(
                "const c = document.querySelector('[data-testid=conversation]');
                 c.scrollTop = 0;
                 const e = c.querySelector(arguments[0]);
                 return e ? e.textContent.trim() : null;",
                vec![json!(css)],
            )
            .await
            .unwrap();
        match v.as_str() {
            Some(t) => {
                *text.lock().unwrap() = t.to_owned();
                true
            }
            None => false,
        }
    })
    .await;
    found.into_inner().unwrap()
}

async fn conversation_text(app: &App) -> String {
    let mut all = String::new();
    for el in app.all_css("[data-testid=conversation-item]").await {
        all.push_str(&el.text().await.unwrap_or_default());
        all.push('\n');
    }
    all
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_is_clicked_in_the_window_or_withdrawn_by_a_message_said_before_sending() {
    let _one = exclusive().await;
    let app = App::launch(options(Vec::new())).await;
    let base = sandbox_base(&app).await;
    let main = app.client.window().await.unwrap();
    for (generation, by_message) in [("eve-27", false), ("eve-b", true)] {
        sandbox_faults(
            &base,
            json!({"missionProtocol": generation, "approval": true}),
        )
        .await;
        app.client.switch_to_window(main.clone()).await.unwrap();
        start_in_window(
            &app,
            &format!("Does shade reduce heat stroke? ({generation})"),
        )
        .await;
        until_for(60, "the approval", || async {
            status(&app).await == "needs_input"
        })
        .await;
        let sid = session_id(&app).await;
        let card = "[data-testid=input-request]";
        let request = attr(&app, card, "data-request-id").await.unwrap();
        let kind = attr(&app, card, "data-kind").await.unwrap();
        assert!(kind.ends_with("approval"), "{kind}");
        assert_eq!(app.text("input-title").await, "Read a source?");
        // eve 1.x says no with `deny`, B with `cancel`; both drawn as the danger.
        let (no, no_label) = if generation == "eve-27" {
            ("deny", "Deny")
        } else {
            ("cancel", "Cancel")
        };
        let approve = "[data-testid=input-option][data-option-id=approve]";
        let cancel = &format!("[data-testid=input-option][data-option-id={no}]");
        assert_eq!(
            attr(&app, approve, "data-style").await.as_deref(),
            Some("primary")
        );
        assert_eq!(
            attr(&app, cancel, "data-style").await.as_deref(),
            Some("danger")
        );
        assert_eq!(app.wait_css(approve).await.text().await.unwrap(), "Approve");
        assert_eq!(app.wait_css(cancel).await.text().await.unwrap(), no_label);
        // The destructive option is drawn as one: filled in the danger colour.
        let fill = app
            .client
            .execute(
                "return getComputedStyle(document.querySelector(arguments[0])).backgroundColor;",
                vec![json!(cancel)],
            )
            .await
            .unwrap();
        let plain = app
            .client
            .execute(
                "return getComputedStyle(document.querySelector('[data-testid=mission-reply-send]')).backgroundColor;",
                vec![],
            )
            .await
            .unwrap();
        assert_ne!(fill, plain, "the danger style is its own");

        // A message first says that it withdraws the pending approval, and sends nothing.
        let reply = app.testid("mission-reply").await;
        reply.send_keys("Skip that source.").await.unwrap();
        app.click("mission-reply-send").await;
        let warning = app.text("mission-reply-warning").await;
        assert!(warning.contains("withdraws that approval"), "{warning}");
        assert!(
            posts(&base, &sid).await.is_empty(),
            "nothing sent before the warning is heeded"
        );
        if generation == "eve-27" {
            app.screenshot("mission-approval").await;
        }

        let (sent, words) = if by_message {
            app.click("mission-reply-send").await;
            (
                json!({"message": "Skip that source."}),
                "Withdrawn by your message",
            )
        } else {
            reply.clear().await.unwrap();
            app.wait_css(approve).await.click().await.unwrap();
            let body = if generation == "eve-27" {
                json!({"answers": [{"interactionId": request, "optionId": "approve"}]})
            } else {
                json!({"inputResponses": [{"requestId": request, "optionId": "approve"}]})
            };
            (body, "Approved")
        };
        until_for(60, "the turn to go on to its end", || async {
            status(&app).await == "waiting"
        })
        .await;
        assert_eq!(
            posts(&base, &sid).await,
            [json!({"route": "", "body": sent})],
            "{generation}"
        );
        assert!(app.all_css(card).await.is_empty());
        let outcome = first_text(&app, "[data-testid=input-outcome]").await;
        assert_eq!(outcome, words, "{generation}");
        // The call the approval held: run, or dropped with the withdrawn approval.
        let text = conversation_text(&app).await;
        assert!(text.contains("Reading"), "{generation}: {text}");
        app.client.close_window().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sign_in_card_opens_its_page_through_the_opener_and_the_turn_resumes_to_the_report() {
    let _one = exclusive().await;
    let tmp = tempfile::tempdir().unwrap();
    let (opener, opened) = opener_script(tmp.path());
    let app = App::launch(options(vec![(
        "CASEBOOK_OPENER".into(),
        opener.display().to_string(),
    )]))
    .await;
    let base = sandbox_base(&app).await;
    let main = app.client.window().await.unwrap();
    for (generation, service) in [("eve-27", "Sandbox Notes"), ("eve-b", "notes")] {
        let knobs =
            json!({"missionProtocol": generation, "signIn": true, "signInSuperseded": true});
        sandbox_faults(&base, knobs).await;
        app.client.switch_to_window(main.clone()).await.unwrap();
        start_in_window(
            &app,
            &format!("What do my notes say about heat? ({generation})"),
        )
        .await;
        until_for(60, "the sign-in card", || async {
            !app.all_css("[data-testid=sign-in-code]").await.is_empty()
        })
        .await;
        let sid = session_id(&app).await;
        // The second attempt replaced the first in the same card, quietly.
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert_eq!(
            app.all_css("[data-testid=sign-in]").await.len(),
            1,
            "{generation}"
        );
        let text = conversation_text(&app).await;
        assert!(
            !text.to_lowercase().contains("failed"),
            "{generation}: {text}"
        );
        assert_eq!(app.text("sign-in-name").await, service);
        let code = app.text("sign-in-code").await;
        assert_eq!(code.len(), 9, "{code}");
        let instructions = app.text("sign-in-instructions").await;
        assert!(instructions.contains(&code), "{instructions}");
        // The expiry counts down.
        let first = app.text("sign-in-expiry").await;
        assert!(first.starts_with("Expires in 1"), "{first}");
        until_for(5, "the countdown to move", || async {
            app.text("sign-in-expiry").await != first
        })
        .await;
        // Nothing to answer, no button that would POST.
        assert!(app.all_css("[data-testid=input-request]").await.is_empty());
        until_for(10, "the status to say a sign-in is needed", || async {
            app.text("mission-status").await == "Sign-in needed"
        })
        .await;
        // A message would withdraw the sign-in (eve 0.70 and later): said before it is sent.
        let reply = app.testid("mission-reply").await;
        reply.send_keys("Never mind my notes.").await.unwrap();
        app.click("mission-reply-send").await;
        until_for(20, "the warning, or a message sent", || async {
            !app.all_css("[data-testid=mission-reply-warning]")
                .await
                .is_empty()
                || !posts(&base, &sid).await.is_empty()
        })
        .await;
        assert!(
            posts(&base, &sid).await.is_empty(),
            "{generation}: sent without a warning: {:?}; status {:?}; {}",
            posts(&base, &sid).await,
            app.text("mission-status").await,
            conversation_text(&app).await
        );
        let warning = app.text("mission-reply-warning").await;
        assert!(warning.contains("withdraws that sign-in"), "{warning}");
        reply.clear().await.unwrap();
        app.click("sign-in-copy").await;
        until_for(5, "Copied", || async {
            app.text("sign-in-copy").await == "Copied"
        })
        .await;
        if generation == "eve-27" {
            app.screenshot("mission-sign-in").await;
        }

        app.click("sign-in-link").await;
        let prefix = format!("{base}/_sandbox/sign-in/{sid}/");
        let found = std::sync::Mutex::new(String::new());
        let (url_cell, opened, prefix) = (&found, &opened, &prefix);
        until_for(
            10,
            "the sign-in page handed to the system opener",
            || async move {
                match std::fs::read_to_string(opened)
                    .unwrap_or_default()
                    .lines()
                    .rfind(|l| l.starts_with(prefix.as_str()))
                {
                    Some(l) => {
                        *url_cell.lock().unwrap() = l.to_owned();
                        true
                    }
                    None => false,
                }
            },
        )
        .await;
        let url = found.into_inner().unwrap();
        assert_eq!(
            attr(&app, "[data-testid=sign-in-link]", "title")
                .await
                .as_deref(),
            Some(url.as_str()),
            "the newest attempt's link"
        );
        // The person signs in in the browser; the window, still following, sees the turn
        // go on to its report.
        let page = reqwest::get(&url).await.unwrap();
        assert_eq!(page.status(), 200, "{url}");
        until_for(60, "the turn to resume to its end", || async {
            status(&app).await == "waiting"
        })
        .await;
        until_for(10, "the report", || async {
            conversation_text(&app).await.contains("Findings")
        })
        .await;
        assert_eq!(
            first_text(&app, "[data-testid=sign-in-outcome]").await,
            "Signed in"
        );
        assert!(
            posts(&base, &sid).await.is_empty(),
            "nothing POSTed for a sign-in"
        );
        app.client.close_window().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_attaches_a_document_picked_in_the_composer_and_shows_it_on_the_message() {
    use base64::Engine as _;
    let _one = exclusive().await;
    let doc = casebook_e2e::data("docx/hyperlink-fragments.docx");
    let bytes = std::fs::read(&doc).unwrap();
    let app = App::launch(options(vec![(
        "CASEBOOK_DIALOG_PATH".into(),
        doc.display().to_string(),
    )]))
    .await;
    let base = sandbox_base(&app).await;
    let main = app.client.window().await.unwrap();
    for generation in ["eve-27", "eve-b"] {
        sandbox_faults(&base, json!({"missionProtocol": generation})).await;
        app.client.switch_to_window(main.clone()).await.unwrap();
        start_in_window(&app, &format!("Read my draft on shade ({generation})")).await;
        until_for(60, "the session to wait", || async {
            status(&app).await == "waiting"
        })
        .await;
        let sid = session_id(&app).await;

        // Picked, shown with its name, then removed and picked again: nothing sent yet.
        app.click("mission-reply-attach").await;
        let chip = app.text("mission-reply-attached").await;
        assert!(chip.contains("hyperlink-fragments.docx"), "{chip}");
        app.click("mission-reply-attached-remove").await;
        assert!(
            app.all_css("[data-testid=mission-reply-attached]")
                .await
                .is_empty()
        );
        app.click("mission-reply-attach").await;
        app.testid("mission-reply")
            .await
            .send_keys("Here is my draft.")
            .await
            .unwrap();
        assert!(posts(&base, &sid).await.is_empty());
        app.click("mission-reply-send").await;

        until_for(30, "the reply to reach the service", || async {
            !posts(&base, &sid).await.is_empty()
        })
        .await;
        let sent = posts(&base, &sid).await;
        assert_eq!(sent.len(), 1, "{sent:?}");
        let parts = sent[0]["body"]["message"]
            .as_array()
            .expect("UserContent parts");
        assert_eq!(
            parts[0],
            json!({"type": "text", "text": "Here is my draft."})
        );
        assert_eq!(parts[1]["type"], "file");
        assert_eq!(parts[1]["filename"], "hyperlink-fragments.docx");
        assert_eq!(
            parts[1]["mediaType"],
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        );
        let data = base64::engine::general_purpose::STANDARD
            .decode(parts[1]["data"].as_str().unwrap())
            .unwrap();
        assert!(data == bytes, "{generation}: the document as it is on disk");

        // The service echoes the file on the person's message, which shows it.
        until_for(60, "the sent file on the message", || async {
            !app.all_css("[data-testid=message-file]").await.is_empty()
        })
        .await;
        let shown = attr(&app, "[data-testid=message-file]", "data-name").await;
        assert_eq!(shown.as_deref(), Some("hyperlink-fragments.docx"));
        assert!(
            app.all_css("[data-testid=mission-reply-attached]")
                .await
                .is_empty()
        );
        app.client.close_window().await.unwrap();
    }
}
