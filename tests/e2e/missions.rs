//! Missions in the real windows against the app's sandbox: the composer, the mission's
//! own window streaming live, cancel, a cut stream, a restart, and export.

use casebook_e2e::{App, AppOptions, exclusive};
use fantoccini::Locator;
use fantoccini::wd::WindowHandle;
use std::path::Path;
use std::time::{Duration, Instant};

const OBJECTIVE: &str = "How does urban heat exposure affect hospital admissions?";

/// Polls `f` every 100 ms until it is true, or panics with `what` after `secs`.
pub(crate) async fn until_for<F, Fut>(secs: u64, what: &str, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if f().await {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn attr(app: &App, css: &str, name: &str) -> Option<String> {
    match app.client.find(Locator::Css(css)).await {
        Ok(el) => el.attr(name).await.ok().flatten(),
        Err(_) => None,
    }
}

pub(crate) async fn status(app: &App) -> String {
    attr(app, "[data-testid=mission-status]", "data-status")
        .await
        .unwrap_or_default()
}

/// Each time the mission window stopped following, and why (its test hook).
pub(crate) async fn follow_stops(app: &App) -> String {
    app.client
        .execute(
            "return window.__casebookMission ? window.__casebookMission.followStops() : [];",
            vec![],
        )
        .await
        .map(|v| v.to_string())
        .unwrap_or_default()
}

/// Every event id the mission window holds, in order (its test hook).
async fn held_ids(app: &App) -> Vec<String> {
    let v = app
        .client
        .execute(
            "return window.__casebookMission ? window.__casebookMission.ids() : [];",
            vec![],
        )
        .await
        .expect("reading the mission window's ids");
    serde_json::from_value(v).unwrap_or_default()
}

/// The `data-id`s of the cards in the DOM now.
async fn card_ids(app: &App) -> Vec<String> {
    let mut out = Vec::new();
    for card in app.all_css("[data-testid=event-card]").await {
        if let Ok(Some(id)) = card.attr("data-id").await {
            out.push(id);
        }
    }
    out
}

fn assert_no_repeats(ids: &[String]) {
    let mut seen = std::collections::HashSet::new();
    for id in ids {
        assert!(seen.insert(id), "event {id} is shown twice: {ids:?}");
    }
}

/// Fills the composer and starts the mission; returns the main window's handle and
/// the preview as it was when Start was clicked.
async fn start_mission(app: &App, budget: &str) -> (WindowHandle, String) {
    start_mission_on(app, OBJECTIVE, budget).await
}

async fn start_mission_on(app: &App, text: &str, budget: &str) -> (WindowHandle, String) {
    app.click("nav-missions").await;
    let objective = app.testid("mission-objective").await;
    objective.send_keys(text).await.unwrap();
    let field = app.testid("mission-budget").await;
    field.clear().await.unwrap();
    field.send_keys(budget).await.unwrap();
    let want = format!("MISSION BUDGET (hard maximum): ${budget} USD");
    app.until("the preview shows the budget", || async {
        app.text("mission-preview").await.contains(&want)
    })
    .await;
    let preview = app.testid("mission-preview").await.text().await.unwrap();
    app.screenshot("missions-composer").await;
    let main = app.client.window().await.unwrap();
    app.click("mission-start").await;
    (main, preview)
}

/// Starts a mission of `objective` from the composer (its budget as it comes) and
/// switches WebDriver to the mission's window.
pub(crate) async fn start_in_window(app: &App, objective: &str) {
    app.click("nav-missions").await;
    let main = app.client.window().await.unwrap();
    start_from_composer(app, objective, std::slice::from_ref(&main)).await;
    switch_to_mission_window(app, &main).await;
}

/// Starts a mission of `objective` from the main window's composer (on the Missions
/// view) and returns its window, the one not in `known`.
pub(crate) async fn start_from_composer(
    app: &App,
    objective: &str,
    known: &[WindowHandle],
) -> WindowHandle {
    let field = app.testid("mission-objective").await;
    field.clear().await.unwrap();
    field.send_keys(objective).await.unwrap();
    app.until("a preview", || async {
        !app.text("mission-preview").await.is_empty()
    })
    .await;
    app.click("mission-start").await;
    new_window(app, known).await
}

/// Waits for a window not in `known` to open.
async fn new_window(app: &App, known: &[WindowHandle]) -> WindowHandle {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let handles = app.client.windows().await.unwrap_or_default();
        if let Some(h) = handles.into_iter().find(|h| !known.contains(h)) {
            return h;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for the mission window to open"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits for the mission's own window and switches WebDriver to it.
pub(crate) async fn switch_to_mission_window(app: &App, main: &WindowHandle) -> WindowHandle {
    let handle = new_window(app, std::slice::from_ref(main)).await;
    app.client.switch_to_window(handle.clone()).await.unwrap();
    app.testid("mission-status").await;
    handle
}

/// Switches the mission window to its raw records (the timeline), as a person debugging
/// a server would.
pub(crate) async fn open_raw_records(app: &App) {
    app.click("mission-raw").await;
    app.wait_css("[data-testid=timeline]").await;
}

/// The embedded sandbox speaking the seeds' own SSE vocabulary (its default is eve's
/// generation A), for the tests of the raw timeline against it.
pub(crate) fn legacy_protocol() -> (String, String) {
    ("CASEBOOK_SANDBOX_MISSION_PROTOCOL".into(), "legacy".into())
}

fn opener_script(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
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

#[tokio::test(flavor = "multi_thread")]
async fn a_mission_streams_in_its_window_cancels_and_exports() {
    let _one = exclusive().await;
    let tmp = tempfile::tempdir().unwrap();
    let (opener, opened) = opener_script(tmp.path());
    let export = tmp.path().join("transcript.out");
    let notes = tmp.path().join("notifications.jsonl");
    let app = App::launch(AppOptions {
        dialog_path: Some(export.display().to_string()),
        env: vec![
            legacy_protocol(),
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "300".into()),
            ("CASEBOOK_OPENER".into(), opener.display().to_string()),
            ("CASEBOOK_NOTIFY_LOG".into(), notes.display().to_string()),
        ],
        ..Default::default()
    })
    .await;

    // The composer checks the budget as it is typed and previews the exact message.
    app.click("nav-missions").await;
    app.testid("missions-empty").await;
    let budget = app.testid("mission-budget").await;
    budget.clear().await.unwrap();
    budget.send_keys("1.234").await.unwrap();
    app.click("mission-objective").await;
    let help = app.testid("budget-help").await;
    assert!(
        help.text().await.unwrap().contains("two decimals"),
        "inline budget check"
    );
    assert_eq!(
        budget.attr("aria-invalid").await.unwrap().as_deref(),
        Some("true")
    );
    assert!(
        !app.testid("mission-start")
            .await
            .is_enabled()
            .await
            .unwrap(),
        "no start with a bad budget"
    );
    let (main, preview) = start_mission(&app, "12.50").await;
    assert!(
        preview.starts_with("MISSION TYPE: research\nMISSION BUDGET TYPE: fixed\nMISSION BUDGET (hard maximum): $12.50 USD\nMISSION OBJECTIVE:"),
        "{preview}"
    );
    assert!(preview.ends_with(OBJECTIVE), "{preview}");

    // Its own window opens and streams.
    switch_to_mission_window(&app, &main).await;
    open_raw_records(&app).await;
    app.until("the mission's title", || async {
        let title = app.client.title().await.unwrap_or_default();
        title.starts_with("Mission: How does urban heat")
    })
    .await;
    until_for(20, "a few events", || async {
        app.all_css("[data-testid=event-card]").await.len() >= 4
    })
    .await;
    assert_eq!(status(&app).await, "running");
    let first = app.testid("event-card").await;
    assert_eq!(
        first.attr("data-event").await.unwrap().as_deref(),
        Some("turn.started")
    );
    assert!(
        app.testid("mission-spend")
            .await
            .text()
            .await
            .unwrap()
            .contains("$12.50")
    );

    // A source's link opens in the system browser, and the window stays where it is.
    let link = app.testid("source-link").await;
    let href = link.attr("href").await.unwrap().unwrap();
    let before = app.client.current_url().await.unwrap();
    app.client
        .execute(
            "document.querySelector('[data-testid=source-link]').click();",
            vec![],
        )
        .await
        .unwrap();
    until_for(10, "the link handed to the system opener", || async {
        std::fs::read_to_string(&opened).is_ok_and(|s| s.lines().any(|l| l == href))
    })
    .await;
    assert_eq!(app.client.current_url().await.unwrap(), before);
    app.screenshot("mission-live").await;

    // Cancel: "Cancelling…" until turn.cancelled then session.waiting arrive.
    app.click("mission-cancel").await;
    let chip = app.testid("mission-status").await;
    let text = chip.text().await.unwrap();
    assert!(
        text == "Cancelling…" || status(&app).await == "cancelled",
        "{text}"
    );
    until_for(20, "the cancelled status", || async {
        status(&app).await == "cancelled"
    })
    .await;
    until_for(20, "the last card to be session.waiting", || async {
        let cards = app.all_css("[data-testid=event-card]").await;
        match cards.last() {
            Some(c) => {
                c.attr("data-event").await.ok().flatten().as_deref() == Some("session.waiting")
            }
            None => false,
        }
    })
    .await;
    // Read once session.waiting is in: the status turns "cancelled" with turn.cancelled,
    // one event earlier, and an export made later has both.
    let ids = held_ids(&app).await;
    assert_no_repeats(&ids);
    let cards = app.all_css("[data-testid=event-card]").await;
    let mut names = Vec::new();
    for c in &cards {
        names.push(c.attr("data-event").await.unwrap().unwrap_or_default());
    }
    assert_eq!(
        names[names.len() - 2..],
        ["turn.cancelled".to_owned(), "session.waiting".to_owned()],
        "{names:?}"
    );
    assert_eq!(chip.text().await.unwrap(), "Cancelled");
    assert!(
        !app.testid("mission-cancel")
            .await
            .is_enabled()
            .await
            .unwrap()
    );
    app.screenshot("mission-cancelled").await;

    // Export through the (hooked) save dialog.
    app.click("export-markdown").await;
    until_for(10, "the Markdown export", || async {
        std::fs::read_to_string(&export).is_ok_and(|s| s.starts_with("# Mission: "))
    })
    .await;
    let md = std::fs::read_to_string(&export).unwrap();
    assert!(md.contains("- Status: cancelled"), "{md}");
    assert!(md.contains("budget (hard maximum): $12.50 USD"), "{md}");
    assert!(md.contains(". turn.cancelled (id "), "{md}");
    assert!(md.contains(&href), "the source's link is in the transcript");
    app.testid("export-result").await;
    app.click("export-json").await;
    until_for(10, "the JSON export", || async {
        std::fs::read_to_string(&export).is_ok_and(|s| s.starts_with('{'))
    })
    .await;
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(json["mission"]["status"], "cancelled");
    assert_eq!(json["mission"]["budgetCents"], 1250);
    let exported: Vec<String> = json["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(exported, ids, "the JSON has every event the window shows");

    // The history in the main window follows the status.
    app.client.switch_to_window(main).await.unwrap();
    let row = app
        .wait_css("[data-testid=mission-row][data-status=cancelled]")
        .await;
    let text = row.prop("textContent").await.unwrap().unwrap_or_default();
    assert!(text.contains("How does urban heat"), "{text}");
    app.screenshot("missions-history").await;
    app.close().await;
}

pub(crate) async fn sandbox_faults(base: &str, body: serde_json::Value) {
    let resp = reqwest::Client::new()
        .post(format!("{base}/_sandbox/faults"))
        .bearer_auth("cbx_sandbox_demo_key")
        .json(&body)
        .send()
        .await
        .expect("the app's sandbox answers");
    assert!(resp.status().is_success(), "{}", resp.status());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_stream_reconnects_and_a_restart_resumes() {
    let _one = exclusive().await;
    let data = tempfile::tempdir().unwrap();
    let notes = data.path().join("notifications.jsonl");
    let options = || AppOptions {
        data_dir: Some(data.path().to_path_buf()),
        env: vec![
            legacy_protocol(),
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "120".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), "150".into()),
            ("CASEBOOK_NOTIFY_LOG".into(), notes.display().to_string()),
            ("CASEBOOK_LOG".into(), "info,casebook_app=debug".into()),
        ],
        ..Default::default()
    };
    let app = App::launch(options()).await;
    app.click("nav-settings").await;
    let base = app
        .testid("settings-active-url")
        .await
        .text()
        .await
        .unwrap();
    sandbox_faults(&base, serde_json::json!({"dropStreamAfter": 5})).await;

    let (main, _) = start_mission(&app, "20.00").await;
    switch_to_mission_window(&app, &main).await;
    open_raw_records(&app).await;
    until_for(20, "the reconnecting status after a cut", || async {
        status(&app).await == "reconnecting"
    })
    .await;
    app.testid("mission-status-detail").await;
    sandbox_faults(&base, serde_json::json!({"clear": true})).await;
    until_for(20, "running again", || async {
        status(&app).await == "running"
    })
    .await;
    until_for(20, "more events", || async {
        held_ids(&app).await.len() >= 20
    })
    .await;
    let ids = held_ids(&app).await;
    assert_no_repeats(&ids);
    assert_no_repeats(&card_ids(&app).await);
    let expected: Vec<String> = (1..=ids.len()).map(|n| n.to_string()).collect();
    assert_eq!(ids, expected, "nothing lost across the cuts");

    // Quit mid-mission, start again on the same data: the mission is in the list and
    // resumes; its window shows the past events, then the live ones.
    app.close().await;
    let app = App::launch(options()).await;
    app.click("nav-missions").await;
    let row = app.testid("mission-row").await;
    let id = row.attr("data-session-id").await.unwrap().unwrap();
    assert!(id.starts_with("ses_"), "{id}");
    let main = app.client.window().await.unwrap();
    app.press(&row, "the mission row").await;
    switch_to_mission_window(&app, &main).await;
    open_raw_records(&app).await;
    until_for(10, "the past events", || async {
        held_ids(&app).await.len() >= ids.len()
    })
    .await;
    let before = held_ids(&app).await.len();
    until_for(20, "live events after the past ones", || async {
        held_ids(&app).await.len() > before + 3
    })
    .await;
    let so_far = held_ids(&app).await;
    let expected: Vec<String> = (1..=so_far.len()).map(|n| n.to_string()).collect();
    assert_eq!(
        so_far, expected,
        "past then live events, each once, in order"
    );
    assert_no_repeats(&card_ids(&app).await);

    // With its window in the background, the mission goes on; it completes, says so
    // in a notification, and the history follows.
    let ids = std::process::Command::new("xdotool")
        .args([
            "search",
            "--onlyvisible",
            "--name",
            "^Casebook$",
            "windowfocus",
            "--sync",
        ])
        .env("DISPLAY", app.xvfb.display())
        .status()
        .expect("xdotool");
    assert!(ids.success(), "focusing the main window");
    app.client.switch_to_window(main.clone()).await.unwrap();
    until_for(60, "the mission to complete", || async {
        attr(&app, "[data-testid=mission-row]", "data-status")
            .await
            .as_deref()
            == Some("complete")
    })
    .await;
    until_for(10, "the completion notification", || async {
        std::fs::read_to_string(&notes).is_ok_and(|s| s.contains("Mission is complete"))
    })
    .await;

    // Asked for again, the window comes forward with every event and the end.
    app.click("mission-row").await;
    switch_to_mission_window(&app, &main).await;
    open_raw_records(&app).await;
    until_for(10, "the complete mission", || async {
        status(&app).await == "complete"
    })
    .await;
    let all = held_ids(&app).await;
    let expected: Vec<String> = (1..=all.len()).map(|n| n.to_string()).collect();
    assert_eq!(all, expected, "every event once, in order");
    assert!(all.len() >= 140, "{} events", all.len());
    let cards = card_ids(&app).await;
    assert_no_repeats(&cards);
    let names = app
        .all_css("[data-testid=event-card][data-event='session.completed']")
        .await;
    assert_eq!(names.len(), 1, "the timeline opens at its end");
    app.screenshot("mission-complete").await;
    app.close().await;
}

/// A long mission's window holds only the pages around the view: scrolling to the very
/// top reads the first events back from SQL, the Home end of the list included, and
/// scrolling back to the bottom follows the live end again.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_mission_pages_from_sql_as_it_scrolls_and_searches() {
    const EVENTS: u64 = 3000;
    let _one = exclusive().await;
    let app = App::launch(AppOptions {
        env: vec![
            legacy_protocol(),
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "0".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), EVENTS.to_string()),
        ],
        ..Default::default()
    })
    .await;
    let (main, _) = start_mission(&app, "5.00").await;
    switch_to_mission_window(&app, &main).await;
    open_raw_records(&app).await;
    until_for(120, "the mission completes", || async {
        status(&app).await == "complete"
    })
    .await;
    let held = || async { app.mission_figure("held").await.expect("held()") };
    assert!(
        held().await <= 1300,
        "at most twelve pages and the live end"
    );
    let first = |pos: u64| {
        format!(
            "document.querySelector('[data-testid=event-card][data-pos=\"{pos}\"]')?.dataset.id ?? null"
        )
    };
    // A nudge that stays within following distance of the bottom, then straight to the
    // top, as Home or dragging the scroll bar does: the top must win.
    app.client
        .execute(
            "const t = document.querySelector('[data-testid=timeline]'); t.scrollTop -= 10;",
            vec![],
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.client
        .execute(
            "const t = document.querySelector('[data-testid=timeline]'); t.scrollTop = 0;",
            vec![],
        )
        .await
        .unwrap();
    until_for(10, "the first event's card", || async {
        let id = app
            .client
            .execute(&format!("return {};", first(0)), vec![])
            .await
            .unwrap();
        id.as_str() == Some("1")
    })
    .await;
    assert!(
        app.testid("jump-latest")
            .await
            .is_displayed()
            .await
            .unwrap(),
        "away from the bottom, the window offers to jump back"
    );
    // The middle is nowhere near what the window holds: its page comes from SQL, in
    // the stored order.
    let store =
        casebook_core::missions::store::MissionStore::open(&app.data_dir().join("casebook.db"))
            .expect("the mission history");
    let session = store.list().await.unwrap()[0].session_id.clone();
    let stored = store.events(&session, 0, u32::MAX).await.unwrap();
    let id_at = |pos: usize| {
        let e = &stored[pos];
        e.event.id.clone().unwrap_or_else(|| format!("#{}", e.seq))
    };
    app.client
        .execute(
            "const t = document.querySelector('[data-testid=timeline]'); t.scrollTop = t.scrollHeight / 2;",
            vec![],
        )
        .await
        .unwrap();
    let middle = (EVENTS / 2) as usize;
    until_for(10, "cards from the middle of the mission", || async {
        let cards = app
            .client
            .execute(
                "return [...document.querySelectorAll('[data-testid=event-card]')].map((c) => [Number(c.dataset.pos), c.dataset.id]);",
                vec![],
            )
            .await
            .unwrap();
        let cards: Vec<(usize, String)> = serde_json::from_value(cards).unwrap_or_default();
        cards.iter().any(|(pos, _)| pos.abs_diff(middle) < 200)
            && cards.iter().all(|(pos, id)| *id == id_at(*pos))
    })
    .await;
    app.click("jump-latest").await;
    let last = app.mission_figure("count").await.expect("count()") - 1;
    until_for(10, "the last event's card again", || async {
        let id = app
            .client
            .execute(&format!("return {};", first(last)), vec![])
            .await
            .unwrap();
        id.is_string()
    })
    .await;
    assert!(held().await <= 1300, "the top's pages were let go again");

    // Searching while the timeline follows its end: the count and the cards at the end
    // are what a plain scan of the stored events finds (not the search index).
    let needle = "COHORT";
    let matching: Vec<String> = stored
        .iter()
        .filter(|e| {
            let text = format!("{} {}", e.event.event, e.event.data).to_lowercase();
            text.contains(&needle.to_lowercase())
        })
        .map(|e| e.event.id.clone().unwrap_or_else(|| format!("#{}", e.seq)))
        .collect();
    assert!(
        matching.len() > 20,
        "a search that spans pages: {}",
        matching.len()
    );
    let search = app.testid("timeline-search").await;
    search.send_keys(needle).await.unwrap();
    let shown = format!("{} shown", matching.len());
    // Asked at each key: the answer drawn last is the whole needle's, not a key's before.
    let whole = format!("[data-testid=timeline][data-search='{needle}']");
    app.until("the whole search's count", || async {
        app.text("timeline-shown").await == shown && !app.all_css(&whole).await.is_empty()
    })
    .await;
    let end = matching.len() - 1;
    until_for(10, "the last match's card at the end", || async {
        let id = app
            .client
            .execute(&format!("return {};", first(end as u64)), vec![])
            .await
            .unwrap();
        id.as_str() == matching.last().map(String::as_str)
    })
    .await;
    let cards = card_ids(&app).await;
    assert!(!cards.is_empty());
    let tail = &matching[matching.len() - cards.len()..];
    assert_eq!(
        cards, tail,
        "the cards on screen are the last matches, in order"
    );
    app.close().await;
}

/// While a mission streams fast, the followed timeline shows its end as drawn (the
/// newest card at the bottom, no gap at the top, before the cards are measured), and
/// the reader's scroll back wins over the following, even when a draw lands between
/// the scroll and its scroll event.
#[tokio::test(flavor = "multi_thread")]
async fn a_fast_stream_is_followed_to_its_end_and_scrolling_back_stops_it() {
    let _one = exclusive().await;
    let app = App::launch(AppOptions {
        env: vec![
            legacy_protocol(),
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "5".into()),
            // The most a turn can have (over eight minutes at this pace): however slowly
            // a loaded machine runs the test, the mission still streams at its end.
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), "100000".into()),
        ],
        ..Default::default()
    })
    .await;
    let (main, _) = start_mission(&app, "5.00").await;
    switch_to_mission_window(&app, &main).await;
    open_raw_records(&app).await;
    let count = || async { app.mission_figure("count").await.unwrap_or(0) };
    until_for(30, "a few hundred events", || async { count().await > 300 }).await;
    // Checked at every animation frame and every few ms between them, for a fixed
    // number of frames rather than a time: a loaded machine draws fewer frames a second,
    // and each is judged the same. Then while the header's height changes every six
    // frames, as when the status's detail comes and goes (the list's height moves with
    // the viewport's), for a fixed number of changes, each checked from its second frame.
    for (wobble, want) in [(false, 120), (true, 20)] {
        app.client
            .execute(
                "const [wobble, want] = arguments;
                 const t = document.querySelector('[data-testid=timeline]');
                 const header = document.querySelector('.mission-header');
                 const p = { frames: 0, checked: 0, changes: 0, faults: [], done: false };
                 window.__followProbe = p;
                 // Frames since the header changed: where the cards sit is checked once
                 // the window has drawn again.
                 let since = 2;
                 const check = () => {
                   const view = window.__casebookMission.view();
                   if (!view.follow) return p.faults.push('stopped following');
                   if (since < 2) return;
                   const box = t.getBoundingClientRect();
                   const rows = [...t.querySelectorAll('.event-row, .event-pending')];
                   const last = rows.at(-1);
                   if (!last) return;
                   p.checked += 1;
                   const bottom = last.getBoundingClientRect().bottom - (box.top + t.clientHeight);
                   if (Math.abs(bottom) > 1) p.faults.push(`the newest card ends ${bottom} px from the bottom`);
                   // Events that arrived since the last draw wait for the next one.
                   if (!view.drawWaiting && Number(last.dataset.pos ?? -1) !== view.total - 1 && last.classList.contains('event-row'))
                     p.faults.push(`the last card drawn is #${last.dataset.pos} of ${view.total}`);
                   if (!rows.some((r) => r.getBoundingClientRect().top <= box.top + 1))
                     p.faults.push('a gap above the first card drawn');
                 };
                 const finish = () => { p.done = true; header.style.paddingBottom = ''; };
                 const frame = () => {
                   if (p.done) return;
                   p.frames += 1;
                   since += 1;
                   check();
                   const enough = wobble ? p.changes >= want && since >= 6 : p.frames >= want;
                   if (enough || p.faults.length >= 5) finish();
                   else requestAnimationFrame(frame);
                 };
                 // Between frames, as the status's detail changes when a message comes.
                 const tick = () => {
                   if (p.done) return;
                   if (wobble && since >= 6 && p.changes < want) {
                     header.style.paddingBottom = header.style.paddingBottom ? '' : `${20 + Math.floor(Math.random() * 60)}px`;
                     p.changes += 1;
                     since = 0;
                   }
                   check();
                   setTimeout(tick, 7);
                 };
                 requestAnimationFrame(frame);
                 tick();",
                vec![serde_json::Value::Bool(wobble), serde_json::json!(want)],
            )
            .await
            .unwrap();
        let probe = follow_probe(&app, "__followProbe", || {
            if wobble {
                format!("{want} changes of the header, six frames each")
            } else {
                format!("{want} animation frames")
            }
        })
        .await;
        let stops = follow_stops(&app).await;
        let faults = &probe["faults"];
        assert_eq!(
            faults.as_array().map(Vec::len),
            Some(0),
            "header changing: {wobble}; while following: {faults}; stops: {stops}"
        );
        // Each frame checks once it is the second since a change: never fewer checks
        // than that, unless the timeline had no card to check.
        let frames_checked = if wobble { 4 * want } else { want };
        assert!(
            probe["checked"].as_u64() >= Some(frames_checked),
            "header changing: {wobble}; the cards were checked in only some frames: {probe}"
        );
    }
    for round in 0..12 {
        // The scroll's event comes at the next frame; a draw may pin the timeline first.
        // Judged once the window has drawn ten frames and more events have come since
        // the scroll, so a draw that would pin has had its chance, however long that takes.
        app.client
            .execute(
                "const t = document.querySelector('[data-testid=timeline]');
                 const mission = window.__casebookMission;
                 const p = { frames: 0, done: false, away: false };
                 window.__scrollProbe = p;
                 const from = mission.count();
                 t.scrollTop -= 2000;
                 const top = t.scrollTop;
                 const frame = () => {
                   p.frames += 1;
                   if (p.frames < 10 || mission.count() <= from) return requestAnimationFrame(frame);
                   p.away = t.scrollHeight - t.clientHeight - t.scrollTop > 1500 && Math.abs(t.scrollTop - top) < 2;
                   p.follow = mission.view().follow;
                   p.done = true;
                 };
                 requestAnimationFrame(frame);",
                vec![],
            )
            .await
            .unwrap();
        let probe = follow_probe(&app, "__scrollProbe", || {
            "ten frames and new events after scrolling back".into()
        })
        .await;
        assert_eq!(
            (probe["away"].as_bool(), probe["follow"].as_bool()),
            (Some(true), Some(false)),
            "round {round}: the timeline went back to following after the reader scrolled up: {probe}; stops: {}",
            follow_stops(&app).await
        );
        app.testid("jump-latest").await;
        app.click("jump-latest").await;
        until_for(60, "following after the jump", || async {
            app.client
                .execute("return window.__casebookMission.view().follow;", vec![])
                .await
                .ok()
                .and_then(|v| v.as_bool())
                == Some(true)
        })
        .await;
        assert_eq!(status(&app).await, "running", "the mission still streams");
    }
    app.close().await;
}

/// Polls the probe a script left in `window[name]` until it says it is done; returns it.
/// The wait is only there to turn a window that stopped drawing into a failure: a
/// loaded machine draws slowly, and the probe counts frames, not time.
async fn follow_probe(app: &App, name: &str, what: impl Fn() -> String) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let probe = app
            .client
            .execute(&format!("return window.{name};"), vec![])
            .await
            .unwrap_or_else(|e| panic!("reading window.{name}: {e}"));
        if probe["done"].as_bool() == Some(true) {
            return probe;
        }
        assert!(
            Instant::now() < deadline,
            "the window never got through {} in 180 s: {probe}; following stopped: {}",
            what(),
            follow_stops(app).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The sandbox speaking eve (generation B): a mission that asks a question holds for the
/// person; clicking one of the options the service listed answers it and the turn goes
/// on; a reply typed in the composer (Enter sends) starts the next turn, streamed into the
/// same window.
#[tokio::test(flavor = "multi_thread")]
async fn an_eve_mission_is_answered_by_clicking_an_option_and_takes_a_typed_reply() {
    let _one = exclusive().await;
    let app = App::launch(AppOptions {
        env: vec![
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "5".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), "120".into()),
        ],
        ..Default::default()
    })
    .await;
    app.click("nav-settings").await;
    let base = app
        .testid("settings-active-url")
        .await
        .text()
        .await
        .unwrap();
    sandbox_faults(&base, serde_json::json!({"missionProtocol": "eve-b"})).await;
    let (main, _) = start_mission_on(
        &app,
        "An ambiguous question: does heat raise hospital admissions?",
        "20.00",
    )
    .await;
    switch_to_mission_window(&app, &main).await;
    until_for(30, "the mission needs an answer", || async {
        status(&app).await == "needs_input"
    })
    .await;
    let card = app.wait_css("[data-testid=input-request]").await;
    let request = card.attr("data-request-id").await.unwrap().unwrap();
    assert!(!request.is_empty());
    let options = app.all_css("[data-testid=input-option]").await;
    assert!(options.len() >= 2, "the service's options, as buttons");
    let chosen = options[0].attr("data-option-id").await.unwrap().unwrap();
    assert!(
        app.client
            .find(Locator::Css("[data-testid=input-request-text]"))
            .await
            .is_ok(),
        "free text is allowed for this question"
    );
    app.screenshot("mission-question").await;
    options[0].click().await.unwrap();
    until_for(30, "the answered turn goes on to its end", || async {
        status(&app).await == "waiting"
    })
    .await;
    assert!(
        app.all_css("[data-testid=input-request]").await.is_empty(),
        "the answered question is gone"
    );
    assert!(!chosen.is_empty());
    let reply = app.testid("mission-reply").await;
    reply.send_keys("And in Europe?").await.unwrap();
    app.screenshot("mission-reply").await;
    // Enter sends.
    reply.send_keys("\u{E007}").await.unwrap();
    // The reply's turn is short (it may run and end between two looks): the reply itself
    // in the conversation, then the window waiting.
    until_for(30, "the reply in the conversation", || async {
        let mut found = false;
        for item in app
            .all_css("[data-testid=conversation-item][data-kind=user]")
            .await
        {
            found |= item.text().await.unwrap_or_default() == "And in Europe?";
        }
        found
    })
    .await;
    until_for(30, "the reply's turn ends waiting again", || async {
        status(&app).await == "waiting"
    })
    .await;
    assert_eq!(
        app.all_css("[data-testid=mission-reply]").await.len(),
        1,
        "the composer is back for the next message"
    );
    app.close().await;
}
