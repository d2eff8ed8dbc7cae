//! One Casebook per data folder: the first start owns a name on the session bus, and a
//! second start hands its command line to it and exits.
//!
//! The second start must never fail because the first is going away. A first start
//! that is closing refuses the hand-over, one that is hung never answers, and the name
//! can vanish between "taken" and the call: each of those is tried again until the
//! name is free to own, and after `patience` the start opens on its own. The name and
//! method are those of `tauri-plugin-single-instance`, so a running Casebook from
//! before this module still takes a newer one's documents.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Wake = Box<dyn Fn() + Send + Sync>;

/// What a start of the app is, once it has asked the session bus.
pub enum Claim {
    /// The first: it owns the name until it closes or is dropped.
    First(Instance),
    /// A Casebook is running on this data folder and took the command line.
    HandedOver,
    /// No hand-over was possible (no session bus, or the first start never answered
    /// within the patience): this start runs on its own, and says why.
    Alone(String),
}

/// The owned name. Dropping it gives the name up.
pub struct Instance {
    shared: Arc<Shared>,
    #[cfg(target_os = "linux")]
    _connection: zbus::blocking::Connection,
}

#[derive(Default)]
struct Shared {
    closing: AtomicBool,
    wake: Mutex<Option<Wake>>,
}

impl Instance {
    /// What to do when a later start hands its documents over (they are already queued
    /// in [`super::launch`]): bring the window forward, say.
    pub fn on_handover(&self, wake: impl Fn() + Send + Sync + 'static) {
        *self.shared.wake.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(wake));
    }

    /// The app is closing: from now on a later start is refused, and so waits for the
    /// name instead of handing its documents to a window that is going away.
    pub fn closing(&self) {
        self.shared.closing.store(true, Ordering::SeqCst);
    }

    /// [`Self::closing`], for whoever decides to close (a signal handler, say).
    pub fn closer(&self) -> impl Fn() + Send + Sync + 'static {
        let shared = self.shared.clone();
        move || shared.closing.store(true, Ordering::SeqCst)
    }
}

/// The bus name for the app's instance id (see [`super::launch::instance_id`]).
pub fn bus_name(id: &str) -> String {
    format!("{id}.SingleInstance")
}

fn object_path(name: &str) -> String {
    format!("/{}", name.replace('.', "/").replace('-', "_"))
}

/// Asks the session bus for the instance `id`, handing `argv` (program name first) and
/// `cwd` over when another start owns it.
#[cfg(target_os = "linux")]
pub fn claim(id: &str, argv: &[String], cwd: &Path, patience: Duration) -> Claim {
    let name = bus_name(id);
    let path = object_path(&name);
    let deadline = Instant::now() + patience;
    loop {
        let shared = Arc::new(Shared::default());
        let owned = zbus::blocking::connection::Builder::session()
            .and_then(|b| b.name(name.as_str()))
            .map(|b| {
                b.replace_existing_names(false)
                    .allow_name_replacements(false)
            })
            .and_then(|b| b.serve_at(path.as_str(), Handover(shared.clone())))
            .and_then(|b| b.build());
        match owned {
            Ok(connection) => {
                return Claim::First(Instance {
                    shared,
                    _connection: connection,
                });
            }
            Err(zbus::Error::NameTaken) => {}
            Err(e) => {
                return Claim::Alone(format!("no session bus to find a running Casebook ({e})"));
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let last = match hand_over(&name, &path, argv, cwd, left.clamp(MIN_CALL, MAX_CALL)) {
            Ok(()) => return Claim::HandedOver,
            Err(e) => e,
        };
        if Instant::now() >= deadline {
            return Claim::Alone(format!(
                "the running Casebook did not take this start within {} s ({last})",
                patience.as_secs()
            ));
        }
        std::thread::sleep(RETRY);
    }
}

#[cfg(not(target_os = "linux"))]
pub fn claim(_: &str, _: &[String], _: &Path, _: Duration) -> Claim {
    Claim::Alone("one instance per data folder is kept on Linux only".to_owned())
}

/// A call to a first start that answers nothing ends here, and is tried again.
#[cfg(target_os = "linux")]
const MAX_CALL: Duration = Duration::from_secs(2);
#[cfg(target_os = "linux")]
const MIN_CALL: Duration = Duration::from_millis(200);
#[cfg(target_os = "linux")]
const RETRY: Duration = Duration::from_millis(100);

#[cfg(target_os = "linux")]
fn hand_over(
    name: &str,
    path: &str,
    argv: &[String],
    cwd: &Path,
    timeout: Duration,
) -> zbus::Result<()> {
    let connection = zbus::blocking::connection::Builder::session()?
        .method_timeout(timeout)
        .build()?;
    connection.call_method(
        Some(name),
        path,
        Some(INTERFACE),
        "ExecuteCallback",
        &(argv, cwd.to_string_lossy().as_ref()),
    )?;
    Ok(())
}

#[cfg(target_os = "linux")]
const INTERFACE: &str = "org.SingleInstance.DBus";

#[cfg(target_os = "linux")]
struct Handover(Arc<Shared>);

#[cfg(target_os = "linux")]
#[zbus::interface(name = "org.SingleInstance.DBus")]
impl Handover {
    fn execute_callback(&self, argv: Vec<String>, cwd: String) -> zbus::fdo::Result<()> {
        if self.0.closing.load(Ordering::SeqCst) {
            return Err(zbus::fdo::Error::Failed("Casebook is closing".to_owned()));
        }
        super::launch::receive(&argv, Path::new(&cwd));
        if let Some(wake) = &*self.0.wake.lock().unwrap_or_else(|e| e.into_inner()) {
            wake();
        }
        Ok(())
    }
}

/// Whether a start owns the instance `id` now (for tests and diagnostics).
#[cfg(target_os = "linux")]
pub fn is_owned(id: &str) -> bool {
    let Ok(connection) = zbus::blocking::Connection::session() else {
        return false;
    };
    let Ok(bus) = zbus::blocking::fdo::DBusProxy::new(&connection) else {
        return false;
    };
    zbus::names::BusName::try_from(bus_name(id))
        .ok()
        .and_then(|name| bus.name_has_owner(name).ok())
        .unwrap_or(false)
}
