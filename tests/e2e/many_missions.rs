//! Five mission windows open at once, each following its own stream, the reader looking
//! at one: every window ends holding every record of its mission, and its conversation's
//! newest items as the store keeps them, the text of each reply to its last character.

use crate::missions::{start_from_composer, until_for};
use casebook_core::missions::store::{MissionStatus, MissionStore};
use casebook_e2e::{App, AppOptions, exclusive};
use std::time::{Duration, Instant};

/// The session id a mission window shows (`#/mission/<id>`).
async fn session_of(app: &App) -> String {
    let hash = app
        .client
        .execute("return window.location.hash;", vec![])
        .await
        .unwrap();
    let hash = hash.as_str().unwrap_or_default();
    let id = hash.trim_start_matches("#/mission/");
    id.split('?').next().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn five_windows_follow_five_missions_without_losing_a_record() {
    let _one = exclusive().await;
    let app = App::launch(AppOptions {
        env: vec![
            ("CASEBOOK_SANDBOX_MISSION_PROTOCOL".into(), "eve-b".into()),
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "15".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), "200".into()),
        ],
        ..Default::default()
    })
    .await;
    let main = app.client.window().await.unwrap();
    app.click("nav-missions").await;
    let mut windows = vec![main.clone()];
    for topic in [
        "cool roofs",
        "shade trees",
        "night heat",
        "heat alerts",
        "older adults",
    ] {
        app.client.switch_to_window(main.clone()).await.unwrap();
        let w =
            start_from_composer(&app, &format!("Does heat harm health? ({topic})"), &windows).await;
        windows.push(w);
    }
    // Windows the reader does not look at (each new one takes the focus) are sent what
    // arrives once a second: this is about them.
    let mut unfocused = 0;
    let store = MissionStore::open(&app.data_dir().join("casebook.db")).unwrap();
    for w in &windows[1..] {
        app.client.switch_to_window(w.clone()).await.unwrap();
        app.testid("mission-status").await;
        let id = session_of(&app).await;
        let focused = app.client.execute("return document.hasFocus();", vec![]);
        unfocused += usize::from(focused.await.unwrap() == false);
        until_for(180, "the mission's turn to end, in its window", || async {
            let status = crate::missions::status(&app).await;
            status == "waiting" || status == "needs_input"
        })
        .await;
        let stored = store.require(&id).await.unwrap();
        assert!(
            matches!(
                stored.status,
                MissionStatus::Waiting | MissionStatus::NeedsInput
            ),
            "{stored:?}"
        );
        let (kept, _) = store.conversation(&id).await.unwrap();
        // Every record, counted in the window as core told it.
        let want = format!("{} records", stored.event_count);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let count = app.text("mission-count").await;
            if count == want {
                break;
            }
            let status = crate::missions::status(&app).await;
            assert!(
                Instant::now() < deadline,
                "{id} ({status}): the window counts {count:?}, the store {want:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // The newest items drawn as the store keeps them: the last one, and every reply's
        // length (a delta lost would shorten it).
        let drawn = app.all_css("[data-testid=conversation-item]").await;
        let mut last = None;
        for el in &drawn {
            let index: usize = el
                .attr("data-index")
                .await
                .unwrap()
                .unwrap()
                .parse()
                .unwrap();
            if let Some(chars) = el.attr("data-chars").await.unwrap() {
                let want = kept.items[index].text.encode_utf16().count();
                assert_eq!(chars, want.to_string(), "item {index} of {id}");
            }
            last = Some(index);
        }
        assert_eq!(last, Some(kept.items.len() - 1), "{id}'s newest item");
    }
    assert!(
        unfocused >= 1,
        "every window was focused: none was in the background"
    );
    app.close().await;
}
