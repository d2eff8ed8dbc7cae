//! The Casebook desktop app: a thin Tauri shell over `casebook-core`.
//!
//! Everything Casebook does lives in core's [`Casebook`]; this crate adds only
//! what needs Tauri: windows, channels, native dialogs, notifications and the
//! system opener. Commands (in `commands`) are one-liners over core.

// A function longer than clippy.toml's 150 lines is split (`make lint`); tests are
// exempt: a scenario reads top to bottom.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod commands;
pub mod console;
mod dialog;
#[cfg(target_os = "linux")]
mod memory;
mod notify;
mod opener;
pub mod windows;

use casebook_core::Error;
use casebook_core::app::{BackendChoice, Casebook, Config};
use casebook_core::backend::SandboxOptions;
use std::sync::Arc;
use tauri::Manager;

/// The variables `run` put in this process's environment for WebKit and GTK: programs
/// Casebook starts get the user's environment without them.
static SET_FOR_WEBKIT: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();

pub(crate) fn set_for_webkit() -> &'static [&'static str] {
    SET_FOR_WEBKIT.get().map_or(&[], Vec::as_slice)
}

/// Registers every command, generic over the runtime so tests can drive the same
/// wiring on `tauri::test::MockRuntime` without a display. The caller manages an
/// `Arc<Casebook>` (see [`start_core`]).
pub fn setup<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        .invoke_handler(tauri::generate_handler![
            commands::app_info,
            commands::opened_documents,
            commands::watch_opened_documents,
            commands::watch_drops,
            commands::update_settings,
            commands::health,
            commands::agent_info,
            commands::inspect_documents,
            commands::pick_documents,
            commands::pick_attachment,
            commands::key_status,
            commands::set_key,
            commands::delete_key,
            commands::preview,
            commands::cite,
            commands::cancel_cite,
            commands::discard_cite,
            commands::save_cited,
            commands::save_for_review,
            commands::save_review_list,
            commands::save_all_cited,
            commands::show_in_folder,
            commands::mission_preview,
            commands::start_mission,
            commands::list_missions,
            commands::open_mission,
            commands::search_missions,
            commands::watch_mission,
            commands::mission_window_looked_at,
            commands::mission_events,
            commands::mission_kinds,
            commands::cancel_mission,
            commands::reply_mission,
            commands::answer_mission,
            commands::mission_conversation,
            commands::mission_items,
            commands::mission_sources,
            commands::open_subagent,
            commands::search_mission,
            commands::export_mission,
            commands::cite_report,
            commands::handed_over_reports,
            commands::open_link,
            commands::account,
            commands::sign_in,
            commands::sign_out,
            commands::open_console,
        ])
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::DragDrop(drag) = event
                && window.label() == "main"
            {
                windows::drag_drop(window.app_handle(), drag);
            }
            if let tauri::WindowEvent::Destroyed = event
                && let Some(core) = window.try_state::<Arc<Casebook>>()
            {
                let core = core.inner().clone();
                let label = window.label().to_owned();
                // Core spawns on the async runtime; window events arrive on the main
                // thread, outside it.
                tauri::async_runtime::spawn(async move { core.unsubscribe(&label) });
            }
        })
}

/// Starts core for `app` in `data_dir`, with the window observer; test builds
/// read the sandbox's pace and mission length from the environment.
pub async fn start_core<R: tauri::Runtime>(
    app: &tauri::AppHandle<R>,
    data_dir: std::path::PathBuf,
) -> Result<Arc<Casebook>, Error> {
    #[cfg(feature = "test-hooks")]
    let sandbox = SandboxOptions::from_env()?;
    #[cfg(not(feature = "test-hooks"))]
    let sandbox = SandboxOptions::default();
    let config = Config {
        data_dir,
        backend: BackendChoice::FromSettings,
        sandbox,
        test_hooks: cfg!(feature = "test-hooks"),
    };
    Casebook::start(config, Arc::new(windows::WindowObserver(app.clone()))).await
}

pub fn run() {
    casebook_core::keys::keep_environment_secrets();
    for name in casebook_core::keys::SECRET_ENVIRONMENT {
        // SAFETY: the first thing `run` does, before any other thread exists.
        unsafe { std::env::remove_var(name) };
    }
    {
        use casebook_core::desktop::renderer as r;
        let mut wanted = r::SCRIPT_ENVIRONMENT.to_vec();
        if r::compositing_should_be_off() {
            wanted.extend(r::SOFTWARE_ENVIRONMENT);
        }
        let set = r::environment_to_set(&wanted, |name| std::env::var_os(name).is_some());
        for (name, value) in &set {
            // SAFETY: the first thing `run` does, before any other thread exists.
            unsafe { std::env::set_var(name, value) };
        }
        let _ = SET_FOR_WEBKIT.set(set.into_iter().map(|(name, _)| name).collect());
    }
    #[cfg(target_os = "linux")]
    memory::install(casebook_core::desktop::renderer::WebMemory::from_env());
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CASEBOOK_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();

    let data_dir = casebook_core::paths::data_dir();
    let argv: Vec<String> = std::env::args().collect();
    let cwd = std::env::current_dir().unwrap_or_default();
    let instance = match &data_dir {
        Ok(dir) => {
            use casebook_core::desktop::{instance, launch};
            let id = launch::instance_id(casebook_core::paths::APP_IDENTIFIER, dir);
            match instance::claim(&id, &argv, &cwd, HANDOVER_PATIENCE) {
                instance::Claim::First(owned) => Some(owned),
                instance::Claim::HandedOver => return,
                instance::Claim::Alone(why) => {
                    tracing::warn!("opening on its own: {why}");
                    None
                }
            }
        }
        Err(_) => None,
    };
    require_display();
    let app = setup(tauri::Builder::default())
        .setup(move |app| {
            // Made here, not from the configuration, so it is born at its kept place;
            // before core starts, so its web process starts alongside.
            let place = data_dir.as_ref().ok().map(|d| d.join("window-state.json"));
            for config in app
                .config()
                .app
                .windows
                .iter()
                .filter(|w| w.label == "main")
            {
                windows::open_main(app.handle(), config, place.clone())?;
            }
            casebook_core::desktop::launch::receive(&argv, &cwd);
            let (handle, dir) = (app.handle().clone(), data_dir.clone());
            let core = tauri::async_runtime::block_on(async move {
                let core = start_core(&handle, dir?).await?;
                core.ready().await;
                Ok::<_, Error>(core)
            });
            // Tauri panics on a setup error: say it and exit instead.
            let core = core.unwrap_or_else(|e| {
                eprintln!("Casebook could not start: {}", e.message());
                std::process::exit(1);
            });
            app.manage(core);
            tracing::info!("ready");
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(e) => {
            eprintln!("Casebook could not start: {e}");
            std::process::exit(1);
        }
    };
    let closer = instance.as_ref().map(|owned| {
        let handle = app.handle().clone();
        owned.on_handover(move || windows::bring_forward(&handle));
        owned.closer()
    });
    close_on_signals(app.handle(), closer);
    let mut instance = instance;
    app.run(move |_, event| match event {
        tauri::RunEvent::ExitRequested { .. } => {
            if let Some(owned) = &instance {
                owned.closing();
            }
        }
        // The name goes with the last window, before the process's own clean-up.
        tauri::RunEvent::Exit => drop(instance.take()),
        _ => {}
    });
}

/// Opens GTK's display before Tauri does: tao panics when it cannot, and a person
/// starting Casebook with no display (over ssh, say) should read why instead.
fn require_display() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: on the main thread, before anything else touches GTK; null argc/argv
        // are allowed. tao's own initialisation afterwards finds GTK ready.
        let opened = unsafe { gtk_sys::gtk_init_check(std::ptr::null_mut(), std::ptr::null_mut()) };
        if opened == 0 {
            let display = std::env::var("DISPLAY").unwrap_or_default();
            let wayland = std::env::var("WAYLAND_DISPLAY").unwrap_or_default();
            eprintln!(
                "Casebook cannot open its window: no display could be opened (DISPLAY={display:?}, WAYLAND_DISPLAY={wayland:?}). Start it from a desktop session; the casebook command works without one."
            );
            std::process::exit(1);
        }
    }
}

/// How long a second start waits for a first one that is closing (or hung) before it
/// opens on its own.
const HANDOVER_PATIENCE: std::time::Duration = std::time::Duration::from_secs(15);

/// A terminate, hang-up or interrupt closes the app as its window's close button does
/// (a session's logout sends one), rather than killing it mid-write.
/// A later start is refused from the signal on, not only once the windows are gone.
fn close_on_signals<R: tauri::Runtime>(
    app: &tauri::AppHandle<R>,
    closing: Option<impl Fn() + Send + Sync + 'static>,
) {
    #[cfg(unix)]
    {
        let closing = std::sync::Arc::new(closing);
        use tokio::signal::unix::{SignalKind, signal};
        for kind in [
            SignalKind::terminate(),
            SignalKind::hangup(),
            SignalKind::interrupt(),
        ] {
            let (app, closing) = (app.clone(), closing.clone());
            // Registered here, before the app says it is ready: a signal that came before
            // a spawned task first ran would still kill it outright.
            let Ok(mut signals) = tauri::async_runtime::block_on(async move { signal(kind) })
            else {
                continue;
            };
            tauri::async_runtime::spawn(async move {
                if signals.recv().await.is_some() {
                    if let Some(closing) = &*closing {
                        closing();
                    }
                    tracing::info!("closing on signal {}", kind.as_raw_value());
                    app.exit(0);
                }
            });
        }
    }
}
