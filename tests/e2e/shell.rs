//! The window, its navigation, native drops and the dialog test hook.

use casebook_core::net::connection::Connection;
use casebook_e2e::{
    App, AppOptions, Drag, data, drag_files_onto, environment, exclusive, processes,
};
use std::path::Path;

async fn card_state(app: &App, path: &Path) -> String {
    app.wait_css(&format!(
        "[data-testid=doc-card][data-path=\"{}\"]",
        path.display()
    ))
    .await
    .attr("data-state")
    .await
    .unwrap()
    .unwrap_or_default()
}

/// "Open with Casebook": a path on the command line becomes a checked card; a
/// second start hands its (relative) path to the running window, which shows it in
/// the Cite view, and exits. Settings' About names the version and data folder.
#[tokio::test(flavor = "multi_thread")]
async fn documents_opened_with_the_app_reach_its_one_window() {
    let _one = exclusive().await;
    let work = tempfile::tempdir().unwrap();
    let first = work.path().join("first report.docx");
    let second = work.path().join("second.docx");
    std::fs::copy(data("docx/headings-lorem-multirun.docx"), &first).unwrap();
    std::fs::copy(data("docx/footnote-in-table.docx"), &second).unwrap();
    let app = App::launch(AppOptions {
        args: vec![first.display().to_string()],
        ..Default::default()
    })
    .await;
    app.until("the opened document's card is ready", || async {
        card_state(&app, &first).await == "ready"
    })
    .await;

    let status = app.start_again(&["second.docx"], work.path());
    assert!(status.success(), "the second start exits cleanly: {status}");
    app.until(
        "the second start's document in the first window",
        || async { card_state(&app, &second).await == "ready" },
    )
    .await;
    assert_eq!(
        app.all_css("[data-testid=doc-card]").await.len(),
        2,
        "both documents, each once"
    );

    app.click("nav-settings").await;
    let version = app.testid("about-version").await.text().await.unwrap();
    assert_eq!(version, format!("Casebook {}", env!("CARGO_PKG_VERSION")));
    let dir = app.testid("about-data-dir").await.text().await.unwrap();
    assert_eq!(dir, app.data_dir().display().to_string());
    // Opened from elsewhere while another view shows: the Cite view comes back with it.
    let status = app.start_again(&[&first.display().to_string()], Path::new("/"));
    assert!(status.success(), "the third start exits cleanly: {status}");
    app.until("the Cite view with the document again", || async {
        card_state(&app, &first).await == "ready"
    })
    .await;
    app.testid("drop-zone").await;
    app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn window_renders_navigation_and_each_view() {
    let _one = exclusive().await;
    let app = App::launch(AppOptions::default()).await;

    let title = app.client.title().await.unwrap();
    assert_eq!(title, "Casebook", "the window's document title");
    for id in ["nav-cite", "nav-missions", "nav-settings"] {
        let nav = app.testid(id).await;
        assert!(nav.is_displayed().await.unwrap(), "{id} is not visible");
    }
    let badge = app.testid("sandbox-badge").await;
    assert_eq!(
        badge.text().await.unwrap(),
        "Sandbox",
        "sandbox mode is the default and shows a badge"
    );

    // Once the first screen is drawn, the bold faces the other views use are made, hidden,
    // and nothing of it stays in the page (ui/src/lib/prewarm.ts).
    app.wait_css("body[data-prewarmed]").await;
    let left = app
        .client
        .execute(
            "return [document.body.dataset.prewarmed, document.querySelectorAll('[data-prewarm]').length]",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        left,
        serde_json::json!(["4", 0]),
        "specimens laid out, then none left"
    );

    // Cite is the first view; its empty state is honest.
    app.testid("drop-zone").await;
    app.testid("documents-empty").await;
    app.screenshot("cite-empty").await;

    app.click("nav-missions").await;
    let h1 = app.wait_css("#missions-title").await;
    assert_eq!(h1.text().await.unwrap(), "Missions");
    app.testid("missions-empty").await;
    app.screenshot("missions-empty").await;

    app.click("nav-settings").await;
    let base = app
        .testid("settings-active-url")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        base.starts_with("http://127.0.0.1:"),
        "sandbox base URL on loopback, got {base}"
    );
    // The sandbox the app started really answers on that URL.
    let health = Connection::new(&base)
        .unwrap()
        .health()
        .await
        .expect("the app's sandbox answers");
    assert_eq!(health.status.as_deref(), Some("ok"));
    app.screenshot("settings").await;

    app.click("nav-cite").await;
    app.testid("drop-zone").await;
    app.close().await;
}

/// The renderer reaches WebKit's web processes: `software` turns compositing off, and
/// with it the GL paths that then draw nothing (WebKit's DMA-BUF renderer, GTK's GL,
/// WebKit's question to EGL about the GPU), so the app's own process never starts Mesa;
/// a variable the user set keeps their value; `gpu` leaves WebKit's environment as it
/// was, and there the app's process does start Mesa (what shows the check can fail).
#[tokio::test(flavor = "multi_thread")]
async fn the_chosen_renderer_reaches_the_web_process() {
    let _one = exclusive().await;
    let names = [
        "WEBKIT_DISABLE_COMPOSITING_MODE",
        "WEBKIT_DISABLE_DMABUF_RENDERER",
        "GDK_GL",
        "WEBKIT_WEB_RENDER_DEVICE_FILE",
    ];
    for (renderer, users, want) in [
        (
            "software",
            None,
            vec![
                "WEBKIT_DISABLE_COMPOSITING_MODE=1",
                "WEBKIT_DISABLE_DMABUF_RENDERER=1",
                "GDK_GL=disable",
                "WEBKIT_WEB_RENDER_DEVICE_FILE=/dev/null",
            ],
        ),
        (
            "software",
            Some(("GDK_GL", "always")),
            vec![
                "WEBKIT_DISABLE_COMPOSITING_MODE=1",
                "WEBKIT_DISABLE_DMABUF_RENDERER=1",
                "GDK_GL=always",
                "WEBKIT_WEB_RENDER_DEVICE_FILE=/dev/null",
            ],
        ),
        ("gpu", None, vec![]),
    ] {
        let mut env = vec![("CASEBOOK_RENDERER".to_owned(), renderer.to_owned())];
        env.extend(users.map(|(k, v)| (k.to_owned(), v.to_owned())));
        let app = App::launch(AppOptions {
            env,
            ..Default::default()
        })
        .await;
        app.testid("nav-cite").await;
        let (main, children) = processes(app.data_dir(), "casebook-app");
        // Mesa's drivers (and libLLVM with them) come in by dlopen once EGL or GLX is
        // started; the GL dispatch libraries are linked in and mapped either way.
        let maps = std::fs::read_to_string(format!("/proc/{main}/maps")).unwrap();
        let mesa: Vec<&str> = maps
            .lines()
            .filter_map(|l| l.rsplit('/').next())
            .filter(|name| name.ends_with("_dri.so") || name.starts_with("libLLVM"))
            .collect();
        match (renderer, users) {
            ("software", None) => {
                assert!(
                    mesa.is_empty(),
                    "{renderer}: the app's process started Mesa: {mesa:?}"
                );
                // Without Mesa in the program, the window still draws.
                app.until("the window drawn on the screen", || async {
                    app.colours_on_screen() > 16
                })
                .await;
            }
            ("gpu", _) => assert!(
                !mesa.is_empty(),
                "{renderer}: the app's process composites through Mesa"
            ),
            // GL the user asked GTK for is theirs to have.
            _ => {}
        }
        let web: Vec<u32> = children
            .iter()
            .filter(|(_, name)| name.starts_with("WebKitWebProces"))
            .map(|(pid, _)| *pid)
            .collect();
        assert!(!web.is_empty(), "no web process under the app");
        for pid in web {
            let mut got: Vec<String> = environment(pid)
                .into_iter()
                .filter(|kv| names.iter().any(|n| kv.starts_with(&format!("{n}="))))
                .collect();
            got.sort();
            let mut want = want.clone();
            want.sort();
            assert_eq!(got, want, "{renderer}, the user's {users:?}");
        }
        app.close().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_os_drop_reaches_the_app() {
    let _one = exclusive().await;
    let app = App::launch(AppOptions::default()).await;
    let zone = app.testid("drop-zone").await;
    let (x, y) = app.screen_center_of(&zone).await;

    let docx = data("docx/headings-lorem-multirun.docx");
    let legacy = data("bad/legacy-word97-hyperlink.doc");
    let lit = || async {
        !app.all_css("[data-testid=drop-zone].dragging")
            .await
            .is_empty()
    };
    // Held over the window, files light the drop zone up; carried away, they leave it
    // as it was, with nothing added.
    let held = Drag::hold_over(app.xvfb.display(), &[&docx], x, y);
    app.until("the drop zone lit while files are held over it", lit)
        .await;
    held.take_back_from(x, y);
    app.until("the drop zone unlit once they left", || async {
        !lit().await
    })
    .await;
    assert!(
        app.all_css("[data-testid=doc-card]").await.is_empty(),
        "nothing was dropped"
    );

    drag_files_onto(app.xvfb.display(), &[&docx, &legacy], x, y);

    app.until("two document cards after the drop", || async {
        app.all_css("[data-testid=doc-card]").await.len() == 2
    })
    .await;
    let cards = app.all_css("[data-testid=doc-card]").await;
    let mut seen = Vec::new();
    for card in cards {
        let path = card.attr("data-path").await.unwrap().unwrap_or_default();
        let state = card.attr("data-state").await.unwrap().unwrap_or_default();
        seen.push((path, state));
    }
    seen.sort();
    let mut want = vec![
        (docx.display().to_string(), "ready".to_owned()),
        (legacy.display().to_string(), "invalid".to_owned()),
    ];
    want.sort();
    assert_eq!(
        seen, want,
        "the dropped paths arrive in the app and are checked there"
    );
    let problem = app
        .wait_css("[data-testid=doc-card][data-state=invalid] .problem")
        .await;
    assert_eq!(
        problem.attr("data-code").await.unwrap().as_deref(),
        Some("legacy_format")
    );
    assert!(!lit().await, "the drop zone unlit after the drop");
    app.screenshot("cite-dropped").await;
    app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn browse_uses_the_dialog_test_hook() {
    let _one = exclusive().await;
    let a = data("pptx/title-bullets-notes.pptx");
    let b = data("docx/comments-ins-del-lorem.docx");
    let app = App::launch(AppOptions {
        dialog_path: Some(format!("{}:{}", a.display(), b.display())),
        ..Default::default()
    })
    .await;
    app.click("browse-button").await;
    app.until("two cards from the dialog hook", || async {
        app.all_css("[data-testid=doc-card][data-state=ready]")
            .await
            .len()
            == 2
    })
    .await;
    app.screenshot("cite-browsed").await;
    let first = app.testid("doc-card").await;
    let text = first.prop("textContent").await.unwrap().unwrap_or_default();
    assert!(text.contains("title-bullets-notes.pptx"), "{text}");
    assert!(text.contains("PowerPoint presentation"), "{text}");
    app.close().await;
}

/// The main window comes back where, and as large as, it was when it was closed.
#[tokio::test(flavor = "multi_thread")]
async fn the_window_remembers_its_size_and_place() {
    let _one = exclusive().await;
    let data = tempfile::tempdir().unwrap();
    let options = || AppOptions {
        data_dir: Some(data.path().to_path_buf()),
        ..Default::default()
    };
    let app = App::launch(options()).await;
    app.client
        .set_window_rect(120, 90, 900, 640)
        .await
        .expect("resizing the window");
    let (x, y, w, h) = app.client.get_window_rect().await.unwrap();
    // Kept as it changes: ending the app the hard way (the driver kills it) loses nothing.
    let state = data.path().join("window-state.json");
    app.until("the window's state is kept", || async {
        std::fs::read_to_string(&state).is_ok_and(|s| s.contains(&w.to_string()))
    })
    .await;
    app.close().await;
    let again = App::launch(options()).await;
    let (x2, y2, w2, h2) = again.client.get_window_rect().await.unwrap();
    let kept = std::fs::read_to_string(&state).unwrap_or_default();
    assert_eq!((w2, h2), (w, h), "the size it was closed at; kept: {kept}");
    assert_eq!((x2, y2), (x, y), "the place it was closed at");
    again.close().await;
}
