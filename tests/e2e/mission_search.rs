//! The Missions view's one search across every mission, in the real window: an objective
//! found first, words of a reply found in the conversation, the hit bringing the mission's
//! window to the item that says them; the list filtered by status; a mission's first
//! message read as its objective and budget.

use crate::missions::{start_in_window, status, switch_to_mission_window, until_for};
use casebook_e2e::{App, AppOptions, exclusive};

/// Each hit's place and item, as drawn now for `query` (an answer to a query typed
/// on the way, or a list redrawn meanwhile, reads as empty).
async fn hits(app: &App, query: &str) -> Vec<(String, String)> {
    let answered = match app.all_css("[data-testid=mission-hits]").await.first() {
        Some(list) => list.attr("data-query").await.ok().flatten(),
        None => None,
    };
    if answered.as_deref() != Some(query) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for h in app.all_css("[data-testid=mission-hit]").await {
        let place = h.attr("data-place").await.ok().flatten();
        let index = h.attr("data-index").await.ok().flatten();
        match (place, index) {
            (Some(p), Some(i)) => out.push((p, i)),
            _ => return Vec::new(),
        }
    }
    out
}

async fn search_for(app: &App, query: &str) {
    let input = app.testid("missions-search").await;
    input.clear().await.unwrap();
    input.send_keys(query).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn every_mission_is_searched_from_the_missions_view_and_a_hit_opens_its_place() {
    let _one = exclusive().await;
    // A short turn at a steady pace: the sandbox's realistic pace plays a turn for
    // a minute or two, more than a loaded CI machine leaves inside the bound below.
    let app = App::launch(AppOptions {
        env: vec![
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "20".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), "60".into()),
        ],
        ..Default::default()
    })
    .await;
    let main = app.client.window().await.unwrap();
    start_in_window(&app, "Do cool roofs lower indoor heat?").await;
    // Its first message reads as the objective and budget it was made from (looked at
    // while the mission starts: a long one later holds only its newest items drawn).
    let brief = app.testid("mission-brief").await.text().await.unwrap();
    assert!(
        brief.contains("Do cool roofs lower indoor heat?")
            && brief.contains("Budget $25.00")
            && !brief.contains("MISSION TYPE"),
        "{brief}"
    );
    until_for(120, "the mission's turn to end", || async {
        status(&app).await == "waiting"
    })
    .await;
    // Three plain words in a row of its longest reply.
    let mut longest = String::new();
    for r in app
        .all_css("[data-testid=conversation-item][data-kind=assistant][data-narration=false]")
        .await
    {
        let text = r.text().await.unwrap_or_default();
        if text.len() > longest.len() {
            longest = text;
        }
    }
    let words: Vec<&str> = longest.split_whitespace().collect();
    let phrase = (words[words.len() / 2..].windows(3))
        .find(|w| w.iter().all(|x| x.chars().all(char::is_alphanumeric)))
        .unwrap_or_else(|| panic!("three plain words in a row: {longest}"))
        .join(" ");
    // The mission's window stays open: a hit brings it to its place.
    app.client.switch_to_window(main.clone()).await.unwrap();

    search_for(&app, "cool roofs").await;
    until_for(20, "the objective found", || async {
        hits(&app, "cool roofs")
            .await
            .first()
            .is_some_and(|h| h.0 == "objective")
    })
    .await;
    search_for(&app, &phrase).await;
    until_for(20, "the reply's words found", || async {
        hits(&app, &phrase).await.iter().any(|h| h.0 == "item")
    })
    .await;
    let (_, index) = (hits(&app, &phrase).await.into_iter())
        .find(|h| h.0 == "item")
        .unwrap();
    let hit = app
        .wait_css(&format!(
            "[data-testid=mission-hit][data-index=\"{index}\"]"
        ))
        .await;
    app.press(&hit, "the hit").await;
    switch_to_mission_window(&app, &main).await;
    let item = app
        .wait_css(&format!(
            "[data-testid=conversation-item][data-index=\"{index}\"]"
        ))
        .await;
    let said = item.text().await.unwrap_or_default();
    assert!(said.contains(&phrase), "{phrase:?} in {said:?}");
    app.client.close_window().await.unwrap();
    app.client.switch_to_window(main.clone()).await.unwrap();

    // The list, filtered: the waiting mission is among the running or waiting ones.
    // Escape empties the search, as a reader would.
    let input = app.testid("missions-search").await;
    input.send_keys("\u{e00c}").await.unwrap();
    let filter = app.testid("missions-filter").await;
    filter.select_by_value("active").await.unwrap();
    until_for(10, "one active mission", || async {
        app.all_css("[data-testid=mission-row]").await.len() == 1
    })
    .await;
    app.close().await;
}

/// A history longer than the window: the list holds a screen of rows (and a few more)
/// whatever its length, the running and waiting first, then the rest newest first, to
/// its last row when scrolled there; filtered by status.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_history_is_listed_a_screen_at_a_time_the_waiting_first() {
    use casebook_core::missions::store::{MissionStatus, MissionStore};
    use casebook_testsupport::history::{add_mission, recorded_mission};
    let _one = exclusive().await;
    let data = tempfile::tempdir().unwrap();
    let records = recorded_mission("Does heat raise hospital admissions?", 20).await;
    let store = MissionStore::open(&data.path().join("casebook.db")).unwrap();
    for k in 0..200 {
        let id = format!("ses_list_{k:03}");
        add_mission(&store, &id, &format!("Heat question {k}"), &records).await;
        // Every tenth waits for the reader, older than the finished after it.
        if k % 10 == 0 {
            store.set_status(&id, MissionStatus::Waiting).await.unwrap();
        }
    }
    drop(store);
    let app = App::launch(AppOptions {
        data_dir: Some(data.path().to_path_buf()),
        ..Default::default()
    })
    .await;
    app.click("nav-missions").await;
    until_for(20, "the list", || async {
        let list = app.all_css("[data-testid=missions-list]").await;
        match list.first() {
            Some(l) => l.attr("data-count").await.ok().flatten().as_deref() == Some("200"),
            None => false,
        }
    })
    .await;
    let rows = app.all_css("[data-testid=mission-row]").await;
    assert!(
        !rows.is_empty() && rows.len() < 100,
        "{} of 200 rows drawn",
        rows.len()
    );
    let mut statuses = Vec::new();
    for r in &rows {
        statuses.push(r.attr("data-status").await.unwrap().unwrap_or_default());
    }
    let waiting = statuses.iter().take_while(|s| *s == "waiting").count();
    assert_eq!(waiting, 20.min(rows.len()), "{statuses:?}");
    // To the list's end: its oldest finished mission, last.
    let last = "const rows = document.querySelectorAll('[data-testid=mission-row]');
                return rows.length ? rows[rows.length - 1].dataset.sessionId : null;";
    app.client
        .execute(
            "window.scrollTo(0, document.documentElement.scrollHeight);",
            vec![],
        )
        .await
        .unwrap();
    until_for(20, "the list's last row drawn", || async {
        let v = app.client.execute(last, vec![]).await.unwrap();
        v.as_str() == Some("ses_list_001")
    })
    .await;
    assert!(app.all_css("[data-testid=mission-row]").await.len() < 100);
    let filter = app.testid("missions-filter").await;
    filter.select_by_value("active").await.unwrap();
    until_for(20, "the waiting ones alone", || async {
        let list = app.all_css("[data-testid=missions-list]").await;
        match list.first() {
            Some(l) => l.attr("data-count").await.ok().flatten().as_deref() == Some("20"),
            None => false,
        }
    })
    .await;
    app.close().await;
}
