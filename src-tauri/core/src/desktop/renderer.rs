//! How WebKit draws: through the GPU, or in software with compositing off.
//!
//! Under software GL (no GPU: llvmpipe), WebKitGTK's accelerated compositing is
//! what makes a streaming mission window slow and heavy (figures in
//! docs/performance.md). It must be decided before the first web view starts, so it
//! is read from the settings file and the environment, not from the running app.

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

/// Set in Casebook's own environment when it turns compositing off, before GTK or WebKit
/// start (the web processes inherit it). With compositing off nothing in the app's process
/// draws through GL, yet three parts of it would still load Mesa (llvmpipe, with libLLVM)
/// for nothing: WebKit's DMA-BUF renderer, which only carries composited frames; GTK,
/// picking GL-capable X visuals; and WebKit asking EGL which GPU its web processes should
/// render on. Naming that device answers without EGL: frames come back through shared
/// memory, so no web process opens it, and `/dev/null` is never a GPU. The window draws
/// the same in less memory (figures in docs/performance.md).
pub const SOFTWARE_ENVIRONMENT: [(&str, &str); 4] = [
    ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
    ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
    ("GDK_GL", "disable"),
    ("WEBKIT_WEB_RENDER_DEVICE_FILE", "/dev/null"),
];

/// Set in Casebook's own environment for its web processes whatever the renderer:
/// JavaScriptCore's optimizing tiers off (the DFG JIT, and the FTL above it). A Casebook
/// page's script is small and runs in short bursts, on events, and the baseline JIT runs
/// it as fast as it needs. The optimizing tiers only add memory a window keeps: their
/// compilers' library pages, and the code and buffers they made (figures in
/// docs/performance.md).
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
/// WebKit's default thresholds are fractions of the machine's memory that no Casebook
/// window reaches, so a window would keep whatever its allocators grew to while it
/// followed a mission. WebKit releases only as a window's footprint crosses a threshold,
/// so Casebook's sit below where a long mission's window ends streaming, and above where
/// a window that has given its memory back sits, so it is not released over and over. A
/// release makes a streaming window compile its code again, so the poll stays at WebKit's
/// default of 30 s. Figures in docs/performance.md.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WebMemory {
    pub limit_mb: u32,
    pub conservative: f64,
    pub strict: f64,
    pub poll_secs: f64,
}

impl WebMemory {
    /// Casebook's: low enough that a window ending a long mission is above the upper
    /// threshold, not just under it (docs/performance.md).
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
