//! Casebook's memory policy for its web processes ([`WebMemory`]), given to WebKit.
//!
//! `WebKitMemoryPressureSettings` can only be given to a `WebKitWebContext` as it is
//! constructed, and tauri's webview (wry) constructs its context without them. So
//! [`install`] wraps the class's constructor, before any context exists, to fill in
//! the settings wherever nobody passed any.

use casebook_core::desktop::renderer::WebMemory;
use gobject_sys::{GObject, GObjectClass, GObjectConstructParam};
use std::ffi::{CStr, c_uint};
use std::sync::OnceLock;
use webkit2gtk_sys::WebKitMemoryPressureSettings;

type Constructor =
    unsafe extern "C" fn(glib_sys::GType, c_uint, *mut GObjectConstructParam) -> *mut GObject;

/// The class's own constructor, and the settings (never freed: every context gets a copy).
struct Installed {
    constructor: Constructor,
    settings: usize,
}

static INSTALLED: OnceLock<Installed> = OnceLock::new();

/// Contexts given the settings so far (tests check the wrapper meets WebKit's class).
#[cfg(test)]
static APPLIED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Makes every WebKit web context built from now on use `policy` (WebKit's own
/// defaults when `None`). Call before the first web view; later calls do nothing.
pub fn install(policy: Option<WebMemory>) {
    let Some(p) = policy else { return };
    INSTALLED.get_or_init(|| {
        // SAFETY: plain calls into WebKit and GObject on the main thread, before any
        // web context exists. The class reference is never dropped, so the class and
        // its patched constructor live as long as the process.
        unsafe {
            let settings = webkit2gtk_sys::webkit_memory_pressure_settings_new();
            webkit2gtk_sys::webkit_memory_pressure_settings_set_memory_limit(settings, p.limit_mb);
            // Strict first: WebKit checks each threshold against the other as it is set.
            webkit2gtk_sys::webkit_memory_pressure_settings_set_strict_threshold(
                settings, p.strict,
            );
            webkit2gtk_sys::webkit_memory_pressure_settings_set_conservative_threshold(
                settings,
                p.conservative,
            );
            webkit2gtk_sys::webkit_memory_pressure_settings_set_poll_interval(
                settings,
                p.poll_secs,
            );
            let class = gobject_sys::g_type_class_ref(webkit2gtk_sys::webkit_web_context_get_type())
                as *mut GObjectClass;
            let installed = Installed {
                constructor: (*class)
                    .constructor
                    .expect("GObject classes have a constructor"),
                settings: settings as usize,
            };
            (*class).constructor = Some(construct);
            installed
        }
    });
}

unsafe extern "C" fn construct(
    ty: glib_sys::GType,
    n: c_uint,
    params: *mut GObjectConstructParam,
) -> *mut GObject {
    let installed = INSTALLED.get().expect("installed before the first context");
    // SAFETY: GObject passes every construct property of the class in `params` (the
    // caller's value or the default), each value initialized to its property's type.
    unsafe {
        for i in 0..n as usize {
            let param = &*params.add(i);
            let name = CStr::from_ptr((*param.pspec).name);
            if name == c"memory-pressure-settings"
                && gobject_sys::g_value_get_boxed(param.value).is_null()
            {
                // Copies the settings into the value; the context copies them again.
                gobject_sys::g_value_set_boxed(
                    param.value,
                    installed.settings as *const WebKitMemoryPressureSettings as *const _,
                );
                #[cfg(test)]
                APPLIED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        (installed.constructor)(ty, n, params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    use std::sync::atomic::Ordering;

    /// WebKit's contexts need GTK, and GTK a display: this runs in a child of the test
    /// below, on a private Xvfb.
    #[test]
    #[ignore = "run by every_web_context_gets_the_settings_unless_it_brings_its_own"]
    fn contexts_on_a_display() {
        install(Some(WebMemory::CASEBOOK));
        // SAFETY: GTK and WebKit's own constructors on this one thread; the contexts
        // are released at the end.
        unsafe {
            assert_ne!(
                gtk_sys::gtk_init_check(std::ptr::null_mut(), std::ptr::null_mut()),
                0,
                "GTK needs the display"
            );
            let before = APPLIED.load(Ordering::SeqCst);
            let plain = webkit2gtk_sys::webkit_web_context_new();
            assert_eq!(
                APPLIED.load(Ordering::SeqCst),
                before + 1,
                "the wrapper found the property"
            );
            let ephemeral = webkit2gtk_sys::webkit_web_context_new_ephemeral();
            assert_eq!(APPLIED.load(Ordering::SeqCst), before + 2);
            // A context built with settings of its own keeps them.
            let own = webkit2gtk_sys::webkit_memory_pressure_settings_new();
            let chosen = gobject_sys::g_object_new(
                webkit2gtk_sys::webkit_web_context_get_type(),
                c"memory-pressure-settings".as_ptr(),
                own,
                std::ptr::null::<std::ffi::c_char>(),
            );
            assert_eq!(
                APPLIED.load(Ordering::SeqCst),
                before + 2,
                "its own settings stand"
            );
            webkit2gtk_sys::webkit_memory_pressure_settings_free(own);
            for context in [plain as *mut GObject, ephemeral as *mut GObject, chosen] {
                gobject_sys::g_object_unref(context);
            }
        }
    }

    #[test]
    fn every_web_context_gets_the_settings_unless_it_brings_its_own() {
        // Xvfb picks a free display and writes its number on the descriptor given.
        let mut xvfb = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-nolisten",
                "tcp",
                "-screen",
                "0",
                "640x480x24",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb: install it with scripts/install-deps.sh test");
        let mut number = String::new();
        std::io::BufReader::new(xvfb.stdout.take().unwrap())
            .read_line(&mut number)
            .unwrap();
        let child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "memory::tests::contexts_on_a_display",
            ])
            .env("DISPLAY", format!(":{}", number.trim()))
            .output()
            .unwrap();
        let _ = xvfb.kill();
        let _ = xvfb.wait();
        let out = String::from_utf8_lossy(&child.stdout);
        // A filter that matches nothing also exits 0: the child must have run the test.
        assert!(
            child.status.success() && out.contains("1 passed"),
            "contexts_on_a_display: {}\n{out}{}",
            child.status,
            String::from_utf8_lossy(&child.stderr)
        );
    }
}
