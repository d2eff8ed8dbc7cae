//! The window against eve itself: a real eve 1.0.1 server on loopback (`tests/eve-agent`,
//! whose scripted model acts on words in the objective), the app pointed at it as a person
//! with their own eve agent would point it. A mission followed to its report, a question
//! answered by a click and one by typing, an approval approved and one denied, a cancel, a
//! reply sent while a turn runs, and a delegated mission with its sub-agent opened.

use crate::interactions::first_text;
use crate::missions::{start_in_window, status};
use crate::remote::remote;
use casebook_e2e::{App, exclusive};
use casebook_testsupport::real_eve::RealEve;
use fantoccini::wd::WindowHandle;
use std::time::{Duration, Instant};

struct Real {
    eve: RealEve,
    app: App,
    main: WindowHandle,
    _data: tempfile::TempDir,
}

impl Real {
    async fn launch() -> Self {
        let eve = tokio::task::spawn_blocking(RealEve::start).await.unwrap();
        let (data, options) = remote(eve.base_url(), eve.key());
        let app = App::launch(options).await;
        app.wait_css("body").await;
        let main = app.client.window().await.unwrap();
        Real {
            eve,
            app,
            main,
            _data: data,
        }
    }

    /// Starts a mission from the main window and follows it in its own window until its
    /// status is `want`.
    async fn start(&self, objective: &str, want: &str) {
        self.app
            .client
            .switch_to_window(self.main.clone())
            .await
            .unwrap();
        start_in_window(&self.app, objective).await;
        self.until_status(want, objective).await;
    }

    /// Starts a mission and follows it until its reply streams.
    async fn start_streaming(&self, objective: &str) {
        self.start(objective, "running").await;
        let reply = "[data-testid=conversation-item][data-kind=assistant]";
        self.until_shown("the reply streaming", reply).await;
    }

    /// Waits until something matches `css`.
    async fn until_shown(&self, what: &str, css: &str) {
        self.until(what, || async { !self.app.all_css(css).await.is_empty() })
            .await;
    }

    /// A liveness bound, not a timing claim: a window that never gets there fails here with
    /// what eve said, instead of hanging the suite.
    async fn until_status(&self, want: &str, what: &str) {
        self.until(what, || async { status(&self.app).await == want })
            .await;
    }

    async fn until<F, Fut>(&self, what: &str, mut f: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let deadline = Instant::now() + Duration::from_secs(180);
        while !f().await {
            if Instant::now() >= deadline {
                let shown = status(&self.app).await;
                self.app.screenshot("failed-real-eve").await;
                panic!(
                    "{what}: never got there (the window says {shown:?}); eve said:\n{}",
                    self.eve.log_tail()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The texts of the conversation's items of `kind` the window draws, replies only
    /// (not narration) for the assistant.
    async fn said(&self, kind: &str) -> Vec<String> {
        let css = match kind {
            "assistant" => {
                "[data-testid=conversation-item][data-kind=assistant][data-narration=false]".into()
            }
            _ => format!("[data-testid=conversation-item][data-kind={kind}]"),
        };
        let mut out = Vec::new();
        for el in self.app.all_css(&css).await {
            out.push(el.text().await.unwrap_or_default());
        }
        out
    }

    async fn last_reply(&self) -> String {
        self.said("assistant").await.pop().unwrap_or_default()
    }

    async fn close_mission_window(&self) {
        self.app.client.close_window().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn real_eve_is_followed_to_its_report_and_its_questions_and_approvals_answered_in_the_window()
{
    let _one = exclusive().await;
    let r = Real::launch().await;

    // A report, with its sources.
    r.start("Does urban heat raise hospital admissions?", "waiting")
        .await;
    r.until_shown("the report's sources", "[data-testid=mission-source]")
        .await;
    for source in r.app.all_css("[data-testid=mission-source]").await {
        let url = source.attr("data-url").await.unwrap().unwrap_or_default();
        assert!(url.starts_with("https://"), "{url}");
    }
    r.until("the report drawn as the reply", || async {
        r.last_reply().await.contains("Findings")
    })
    .await;
    r.close_mission_window().await;

    // A question answered by a click on one of eve's options: its ids are its labels.
    r.start("Which period? An ambiguous question.", "needs_input")
        .await;
    r.until("eve's two options", || async {
        r.app.all_css("[data-testid=input-option]").await.len() == 2
    })
    .await;
    let options = r.app.all_css("[data-testid=input-option]").await;
    let mut labels = Vec::new();
    for o in &options {
        labels.push(o.text().await.unwrap());
    }
    assert_eq!(labels, ["Last year", "Last decade"]);
    options[1].click().await.unwrap();
    r.until_status("waiting", "the answered question's turn")
        .await;
    assert!(
        r.app
            .all_css("[data-testid=input-request]")
            .await
            .is_empty()
    );
    let outcome = first_text(&r.app, "[data-testid=input-outcome]").await;
    assert!(outcome.contains("Last decade"), "{outcome}");
    // The status and the reply are drawn apart: the reply may come a frame later.
    r.until("the model quoting the answer", || async {
        r.last_reply().await.contains("Last decade")
    })
    .await;
    r.close_mission_window().await;

    // The same question answered by typing.
    r.start("Which period, typed? An ambiguous question.", "needs_input")
        .await;
    let typed = "Only 2019 to 2021";
    r.app
        .testid("input-request-text")
        .await
        .send_keys(typed)
        .await
        .unwrap();
    r.app.click("input-request-send").await;
    r.until_status("waiting", "the typed answer's turn").await;
    let outcome = first_text(&r.app, "[data-testid=input-outcome]").await;
    assert!(outcome.contains(typed), "{outcome}");
    r.until("the model quoting the typed answer", || async {
        r.last_reply().await.contains(typed)
    })
    .await;
    r.close_mission_window().await;

    // An approval approved, and one denied: eve names no style, the window draws them.
    for (option, words) in [("approve", "Approved"), ("deny", "Declined")] {
        r.start(
            &format!("Publish a note ({option}): approval."),
            "needs_input",
        )
        .await;
        let css = |id: &str| format!("[data-testid=input-option][data-option-id={id}]");
        let app = &r.app;
        let style = |id: &str| {
            let css = css(id);
            async move { app.wait_css(&css).await.attr("data-style").await.unwrap() }
        };
        assert_eq!(style("approve").await.as_deref(), Some("primary"));
        assert_eq!(style("deny").await.as_deref(), Some("danger"));
        r.app.wait_css(&css(option)).await.click().await.unwrap();
        r.until_status("waiting", option).await;
        let outcome = first_text(&r.app, "[data-testid=input-outcome]").await;
        assert_eq!(outcome, words);
        r.close_mission_window().await;
    }
    r.app.client.switch_to_window(r.main.clone()).await.unwrap();
    r.app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn real_eve_is_cancelled_replied_to_while_it_works_and_its_sub_agent_opened_in_the_window() {
    let _one = exclusive().await;
    let r = Real::launch().await;

    // A cancel cuts the turn off: what it had said is narration, and the session waits.
    r.start_streaming("How do bees navigate? slow 40").await;
    r.app.click("mission-cancel").await;
    r.until_status("cancelled", "the cancelled turn").await;
    assert!(
        r.said("assistant").await.is_empty(),
        "a cut-off text is no reply"
    );
    r.close_mission_window().await;

    // A reply sent while a turn streams: eve queues it for a turn of its own, and the
    // window follows that turn to its end. The composer is free again as soon as eve has
    // taken it, while the running turn goes on.
    let message = "And in Europe?";
    r.start_streaming("How do ants navigate? slow 15").await;
    let composer = r.app.testid("mission-reply").await;
    composer.send_keys(message).await.unwrap();
    composer.send_keys("\u{E007}").await.unwrap();
    r.until("the composer free again", || async {
        r.app
            .all_css("[data-testid=mission-reply-attach][disabled]")
            .await
            .is_empty()
            && r.app
                .testid("mission-reply")
                .await
                .prop("value")
                .await
                .ok()
                .flatten()
                == Some(String::new())
    })
    .await;
    assert_eq!(status(&r.app).await, "running", "the first turn goes on");
    assert!(!r.last_reply().await.contains("You said"));
    r.until("the reply's own turn answered", || async {
        status(&r.app).await == "waiting"
            && r.last_reply()
                .await
                .contains(&format!("You said: {message}"))
    })
    .await;
    let users = r.said("user").await;
    assert!(users.iter().any(|u| u == message), "{users:?}");
    r.close_mission_window().await;

    // A delegated mission: its researcher opened from the step that delegated to it.
    r.start("Who studies urban heat? delegate", "waiting").await;
    let open = r.app.wait_css("[data-testid=subagent-open]").await;
    open.click().await.unwrap();
    r.until_shown(
        "the sub-agent's conversation",
        "[data-testid=subagent-status]",
    )
    .await;
    let mut reads = 0;
    loop {
        // eve 1.x's child session waits for its parent's next message once its task is
        // done; it is not ended.
        let status = r.app.text("subagent-status").await;
        if matches!(status.trim(), "complete" | "waiting") {
            break;
        }
        reads += 1;
        let error = r.app.all_css("[data-testid=subagent-error]").await;
        let error = match error.first() {
            Some(e) => e.text().await.unwrap_or_default(),
            None => String::new(),
        };
        assert!(
            reads < 60 && error.is_empty(),
            "the sub-agent never finished: {status:?} {error:?}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        r.app.click("subagent-refresh").await;
    }
    let panel = "[data-testid=subagent-panel] [data-kind=assistant][data-narration=false]";
    let replies = r.app.all_css(panel).await;
    let text = replies.last().unwrap().text().await.unwrap();
    assert!(text.contains("Researcher findings"), "{text}");
    r.close_mission_window().await;
    r.app.client.switch_to_window(r.main.clone()).await.unwrap();
    r.app.close().await;
}
