//! How WebKit draws: through the GPU, or in software with compositing off.
//!
//! Under software GL (no GPU: llvmpipe), WebKitGTK's accelerated compositing is
//! what makes a streaming mission window slow and heavy (measured: frames of
//! 116 ms instead of 23 ms, 160 MB instead of 88 MB for a bare window). It must be
//! decided before the first web view starts, so it is read from the settings file
//! and the environment, not from the running app.

use crate::settings::{Renderer, Settings};

/// Whether this machine has a GPU render node Mesa would use instead of llvmpipe.
pub fn has_gpu() -> bool {
    std::fs::read_dir("/dev/dri").is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    })
}

/// Whether WebKit's compositing should be turned off in this process: never when
/// `WEBKIT_DISABLE_COMPOSITING_MODE` already decides it, else `CASEBOOK_RENDERER`,
/// else the setting, against this machine.
pub fn compositing_should_be_off() -> bool {
    if std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_some() {
        return false;
    }
    let chosen = Renderer::from_env().unwrap_or_else(|| {
        crate::paths::data_dir()
            .map(|d| Settings::load(&d).renderer)
            .unwrap_or_default()
    });
    chosen.compositing_off(has_gpu())
}

/// What Casebook puts in its own environment when it turns compositing off, before GTK
/// or WebKit start (the web processes inherit it). With compositing off nothing in the
/// app's process draws through GL, yet three parts of it would still start Mesa
/// (llvmpipe here, with libLLVM): WebKit's DMA-BUF renderer, which only carries
/// composited frames; GTK, which picks GL-capable X visuals when it opens the display;
/// and WebKit asking EGL which GPU its web processes should render on, as the first web
/// view starts. Naming that device answers the question without EGL; frames come back
/// through shared memory, so no web process opens it, and `/dev/null` (never a GPU) says
/// so. The first two took the idle app's process from 91 to 85 MB (PSS); the device
/// took it from 80 to 56 MB, and the app with its WebKit processes from 209 to 193 MB.
/// The window draws the same.
pub const SOFTWARE_ENVIRONMENT: [(&str, &str); 4] = [
    ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
    ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
    ("GDK_GL", "disable"),
    ("WEBKIT_WEB_RENDER_DEVICE_FILE", "/dev/null"),
];

/// What Casebook puts in its own environment for its web processes whatever the
/// renderer: JavaScriptCore's optimizing tiers off (the DFG JIT, and the FTL above it).
/// A Casebook page's script is small and runs in short bursts, on events; the baseline
/// JIT runs it as fast as it needs. What the optimizing tiers cost is memory the window
/// keeps: their compilers' library pages, touched once a window runs long enough, and the
/// code and buffers they made. A window that followed 50,000 records settled at 83 MB with
/// them off against 87 MB (1.08x a short mission's against 1.10x) and peaked at 107 MB
/// against 115, at the same share of a core (see docs/performance.md).
pub const SCRIPT_ENVIRONMENT: [(&str, &str); 1] = [("JSC_useDFGJIT", "false")];

/// Of `wanted`, the variables Casebook sets before GTK or WebKit start: those the user has
/// not set already (theirs win). `is_set` reads the environment.
pub fn environment_to_set(
    wanted: &[(&'static str, &'static str)],
    is_set: impl Fn(&str) -> bool,
) -> Vec<(&'static str, &'static str)> {
    wanted
        .iter()
        .copied()
        .filter(|(name, _)| !is_set(name))
        .collect()
}

/// When WebKit gives a web process's memory back, as `WebKitMemoryPressureSettings`
/// takes it: every `poll_secs`, a web process whose private memory is above
/// `conservative × limit_mb` drops its caches, and above `strict × limit_mb` also its
/// compiled code, then collects garbage and returns free pages.
///
/// WebKit's defaults put those thresholds at a third and a half of the machine's memory
/// (up to 3 GB), which no Casebook window reaches, so a window keeps whatever its
/// allocators once grew to. A mission window following a fast mission holds 40–55 MB of
/// private memory (about 30 draws a second churn its cards), against 15 MB when it
/// opened, and kept about 40 MB once the mission ended (PSS 114 MB against 86). With
/// these settings two checks after the mission ends bring it to about 24 MB (97 MB): the
/// first drops code and starts a collection, the second returns what that freed.
///
/// WebKit releases as a window's footprint crosses a threshold, so a window that ends a
/// mission just under the upper one keeps its garbage: once the conversation window held
/// only what covers its screen, a 50,000-record mission ended near 32 MB and settled at
/// 89 MB (1.17x a short mission's) under thresholds of 28.8 and 32 MB, against 82 MB
/// (1.08x) under these of 25.2 and 28 MB. A window that has given its memory back sits
/// below them, so it is not released over and over: idle over the next check, 0.1% of a
/// core. A release costs a window that is streaming about 0.7 s of CPU (its code is
/// compiled again; measured with a check every 10 s: 36% of a core against 29%), so the
/// poll stays at WebKit's default of 30 s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WebMemory {
    pub limit_mb: u32,
    pub conservative: f64,
    pub strict: f64,
    pub poll_secs: f64,
}

impl WebMemory {
    /// Casebook's: caches dropped above 25.2 MB, code too above 28 MB.
    pub const CASEBOOK: Self = Self {
        limit_mb: 56,
        conservative: 0.45,
        strict: 0.5,
        poll_secs: 30.0,
    };

    /// Casebook's settings with the limit `CASEBOOK_WEB_MEMORY_MB` may set; `None`
    /// (WebKit's own defaults) when it is 0.
    pub fn from_env() -> Option<Self> {
        Self::with_limit(std::env::var("CASEBOOK_WEB_MEMORY_MB").ok().as_deref())
    }

    fn with_limit(raw: Option<&str>) -> Option<Self> {
        match raw.map(|r| r.trim().parse::<u32>()) {
            Some(Ok(0)) => None,
            Some(Ok(limit_mb)) => Some(Self {
                limit_mb,
                ..Self::CASEBOOK
            }),
            // Unset or unreadable: a typo must not leave the app without its policy.
            _ => Some(Self::CASEBOOK),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_follows_the_machine_and_the_others_force() {
        assert!(Renderer::Auto.compositing_off(false));
        assert!(!Renderer::Auto.compositing_off(true));
        assert!(Renderer::Software.compositing_off(true));
        assert!(!Renderer::Gpu.compositing_off(false));
        let v: Renderer = serde_json::from_str("\"software\"").unwrap();
        assert_eq!(v, Renderer::Software);
    }

    #[test]
    fn the_users_own_webkit_and_gtk_settings_are_kept() {
        let all = environment_to_set(&SOFTWARE_ENVIRONMENT, |_| false);
        assert_eq!(all, SOFTWARE_ENVIRONMENT.to_vec());
        let theirs = environment_to_set(&SOFTWARE_ENVIRONMENT, |name| name == "GDK_GL");
        assert_eq!(
            theirs.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            [
                "WEBKIT_DISABLE_COMPOSITING_MODE",
                "WEBKIT_DISABLE_DMABUF_RENDERER",
                "WEBKIT_WEB_RENDER_DEVICE_FILE"
            ]
        );
    }

    #[test]
    fn web_memory_is_casebooks_unless_the_environment_says_otherwise() {
        assert_eq!(WebMemory::with_limit(None), Some(WebMemory::CASEBOOK));
        assert_eq!(WebMemory::with_limit(Some("0")), None);
        assert_eq!(
            WebMemory::with_limit(Some("lots")),
            Some(WebMemory::CASEBOOK)
        );
        let big = WebMemory::with_limit(Some(" 256 ")).unwrap();
        assert_eq!(big.limit_mb, 256);
        assert_eq!(big.strict, WebMemory::CASEBOOK.strict);
        // WebKit refuses thresholds out of order or outside (0, 1).
        let c = WebMemory::CASEBOOK;
        assert!(0.0 < c.conservative && c.conservative < c.strict && c.strict < 1.0);
    }
}
