//! Mission windows, and what the app tells its windows and the desktop when a
//! mission's status changes.

use crate::{notify, opener};
use casebook_core::Error;
use casebook_core::desktop::launch::{DragState, DropUpdate};
use casebook_core::missions::follower::{MissionStatusChanged, Observer};
use casebook_core::missions::store::{MissionRecord, MissionStatus};
use std::sync::Mutex;
use tauri::ipc::Channel;
use tauri::{AppHandle, Emitter, Manager, Runtime, WebviewUrl, WebviewWindowBuilder};

/// The event the main window's missions list follows.
pub const STATUS_EVENT: &str = "mission-status";

/// A channel the main window registered: the latest one (a reloaded page registers
/// anew), or none yet. Each is registered once: replacing a channel tells its page
/// the old one ended, and the page then stops hearing it.
///
/// The main window hears of opened and dropped documents through channels, not events:
/// listening to an event makes Tauri run a script in the page, and reading that script's
/// answer starts a JavaScript engine in the app's own process, resident for good
/// (docs/performance.md). Registering a channel runs nothing; only a message would.
struct Bell<T>(Mutex<Option<Channel<T>>>);

impl<T: serde::Serialize> Bell<T> {
    fn ring(&self, message: T) {
        if let Some(channel) = &*self.0.lock().unwrap_or_else(|e| e.into_inner()) {
            let _ = channel.send(message);
        }
    }
}

/// Keeps `channel` as the one its messages go to: `Channel<()>` is told of each later
/// start that brings documents, `Channel<DropUpdate>` (through [`tell_of_drops`]) of
/// files dragged onto the main window.
pub fn keep<R: Runtime, T: Send + Sync + 'static>(app: &AppHandle<R>, channel: Channel<T>) {
    // Managed on first use: `manage` keeps the first value and ignores later ones.
    app.manage(Bell::<T>(Mutex::new(None)));
    *app.state::<Bell<T>>()
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = Some(channel);
}

/// Keeps `updates`, told of files dragged over and dropped on the main window.
pub fn tell_of_drops<R: Runtime>(app: &AppHandle<R>, updates: Channel<DropUpdate>) {
    app.manage(Mutex::new(DragState::default()));
    keep(app, updates);
}

/// A drag over the main window, for the channel `tell_of_drops` kept.
pub fn drag_drop<R: Runtime>(app: &AppHandle<R>, event: &tauri::DragDropEvent) {
    let (Some(bell), Some(drag)) = (
        app.try_state::<Bell<DropUpdate>>(),
        app.try_state::<Mutex<DragState>>(),
    ) else {
        return;
    };
    let mut drag = drag.lock().unwrap_or_else(|e| e.into_inner());
    let update = match event {
        tauri::DragDropEvent::Enter { .. } | tauri::DragDropEvent::Over { .. } => drag.over(),
        tauri::DragDropEvent::Leave => Some(drag.left()),
        tauri::DragDropEvent::Drop { paths, .. } => Some(
            drag.dropped(
                (paths.iter())
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect(),
            ),
        ),
        _ => None,
    };
    if let Some(update) = update {
        bell.ring(update);
    }
}

/// A later start handed its documents over (core queued them): the main window comes
/// to the front and takes them with `opened_documents`.
pub fn bring_forward<R: Runtime>(app: &AppHandle<R>) {
    if let Some(w) = app.get_webview_window("main") {
        let (_, _, _) = (w.unminimize(), w.show(), w.set_focus());
    }
    // Before the window registered, it has yet to take them: nothing to ring.
    if let Some(bell) = app.try_state::<Bell<()>>() {
        bell.ring(());
    }
}

/// Builds the main window from its `config`, where it was last when `file` keeps a
/// place still on a screen (born there: no jump from the default), and keeps its place
/// in `file` as it changes, not only at a clean exit: a crash keeps it too.
pub fn open_main<R: Runtime>(
    app: &AppHandle<R>,
    config: &tauri::utils::config::WindowConfig,
    file: Option<std::path::PathBuf>,
) -> tauri::Result<()> {
    use casebook_core::desktop::window_place::{self, PlaceKeeper, Screen, WindowPlace};
    let kept = file.as_deref().and_then(window_place::load);
    let mut builder = WebviewWindowBuilder::from_config(app, config)?;
    if let Some(p) = kept {
        let screens: Vec<Screen> = (app.available_monitors().unwrap_or_default().iter())
            .map(|m| (m.position(), m.size(), m.scale_factor()))
            .map(|(at, size, scale)| Screen {
                x: at.x,
                y: at.y,
                width: size.width,
                height: size.height,
                scale,
            })
            .collect();
        let open = p.opening(&screens);
        builder = builder
            .inner_size(open.size.0, open.size.1)
            .maximized(open.maximized);
        if let Some((x, y)) = open.position {
            builder = builder.position(x, y);
        }
    }
    let main = builder.build()?;
    let Some(file) = file else { return Ok(()) };
    let keeper = PlaceKeeper::new(file, kept);
    let w = main.clone();
    main.on_window_event(move |e| {
        if let tauri::WindowEvent::Moved(_) | tauri::WindowEvent::Resized(_) = e
            && let (Ok(at), Ok(size)) = (w.outer_position(), w.inner_size())
        {
            let (x, y, width, height) = (at.x, at.y, size.width, size.height);
            let maximized = w.is_maximized().unwrap_or(false);
            let place = WindowPlace {
                x,
                y,
                width,
                height,
                maximized,
            };
            keeper.changed(place, w.is_minimized().unwrap_or(false));
        }
    });
    Ok(())
}

/// The window label for a session: labels allow fewer characters than session ids.
pub fn window_label(session_id: &str) -> String {
    let safe: String = session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("mission-{safe}")
}

/// Only the app's own pages load in a mission window; a web link that would
/// navigate it goes to the system browser instead.
fn allow_navigation(url: &url::Url) -> bool {
    let own = match url.scheme() {
        "tauri" => true,
        "http" | "https" => url.host_str() == Some("tauri.localhost"),
        _ => false,
    };
    if !own && matches!(url.scheme(), "http" | "https") {
        let _ = opener::open_url(url.as_str());
    }
    own
}

/// Brings the mission's window forward, opening it if it is not open.
pub fn open_mission<R: Runtime>(app: &AppHandle<R>, record: &MissionRecord) -> Result<(), Error> {
    open_mission_at(app, record, None)
}

/// [`open_mission`], showing item `item` (a search hit): the window opens there, or one
/// already open goes there (its address's `?item=`, which it follows).
pub fn open_mission_at<R: Runtime>(
    app: &AppHandle<R>,
    record: &MissionRecord,
    item: Option<u32>,
) -> Result<(), Error> {
    let label = window_label(&record.session_id);
    // Percent-encoded so the UI's decodeURIComponent gets the id back exactly.
    let id = casebook_core::missions::client::encode_segment(&record.session_id);
    let hash = match item {
        Some(n) => format!("#/mission/{id}?item={n}"),
        None => format!("#/mission/{id}"),
    };
    if let Some(w) = app.get_webview_window(&label) {
        if item.is_some() {
            // The hash is ours (an encoded id and a number), so it is safe to write.
            let _ = w.eval(format!("window.location.hash = {hash:?};"));
        }
        let _ = w.unminimize();
        let _ = w.show();
        let _ = w.set_focus();
        return Ok(());
    }
    let headline = record.headline(60);
    WebviewWindowBuilder::new(
        app,
        label,
        WebviewUrl::App(format!("index.html{hash}").into()),
    )
    .title(format!("{headline} · Casebook mission"))
    .inner_size(920.0, 780.0)
    .min_inner_size(560.0, 420.0)
    .disable_drag_drop_handler()
    .on_navigation(allow_navigation)
    .build()
    .map(|_| ())
    .map_err(|e| Error::internal(format!("Cannot open the mission window: {e}")))
}

/// The mission runs and is in the list whether or not its window opens.
pub fn open_mission_or_log<R: Runtime>(app: &AppHandle<R>, record: &MissionRecord) {
    if let Err(e) = open_mission(app, record) {
        tracing::warn!("{}", e.message());
    }
}

/// Tells the main window of every status change, and the desktop when a mission
/// needs the user while its window is not in front.
pub struct WindowObserver<R: Runtime>(pub AppHandle<R>);

impl<R: Runtime> Observer for WindowObserver<R> {
    fn status_changed(&self, mission: &MissionRecord, status: MissionStatus) {
        let changed = MissionStatusChanged {
            session_id: mission.session_id.clone(),
            status,
        };
        let _ = self.0.emit_to("main", STATUS_EVENT, changed);
        let what = match status {
            MissionStatus::Waiting => "is waiting for you",
            MissionStatus::NeedsInput => "needs your answer",
            MissionStatus::Complete => "is complete",
            MissionStatus::Failed => "failed",
            _ => return,
        };
        let focused = self
            .0
            .get_webview_window(&window_label(&mission.session_id))
            .and_then(|w| w.is_focused().ok())
            .unwrap_or(false);
        if !focused {
            notify::notify(format!("Mission {what}"), mission.headline(200));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_safe() {
        assert_eq!(window_label("ses_0a1b"), "mission-ses_0a1b");
        assert_eq!(window_label("a.b/c"), "mission-a_b_c");
    }

    #[test]
    fn only_the_app_navigates_in_a_mission_window() {
        let ok = |s: &str| allow_navigation(&url::Url::parse(s).unwrap());
        assert!(ok("tauri://localhost/index.html#/mission/ses_1"));
        assert!(ok("http://tauri.localhost/index.html"));
        assert!(!ok("file:///etc/passwd"));
        assert!(!ok("javascript:alert(1)"));
    }
}
