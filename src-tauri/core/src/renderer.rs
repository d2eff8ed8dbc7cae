//! How WebKit draws: through the GPU, or in software with compositing off.
//!
//! Under software GL (no GPU: llvmpipe), WebKitGTK's accelerated compositing is
//! what makes a streaming mission window slow and heavy (measured: frames of
//! 116 ms instead of 23 ms, 160 MB instead of 88 MB for a bare window). It must be
//! decided before the first web view starts, so it is read from the settings file
//! and the environment, not from the running app.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum Renderer {
    /// Software when this machine has no GPU render node, else the GPU.
    #[default]
    Auto,
    Gpu,
    Software,
}

impl Renderer {
    /// `CASEBOOK_RENDERER` (auto, gpu or software) wins over the setting.
    pub fn from_env() -> Option<Self> {
        match std::env::var("CASEBOOK_RENDERER").ok()?.trim() {
            "auto" => Some(Self::Auto),
            "gpu" => Some(Self::Gpu),
            "software" => Some(Self::Software),
            _ => None,
        }
    }

    /// Whether WebKit's compositing should be off, given whether a GPU is there.
    pub fn compositing_off(self, has_gpu: bool) -> bool {
        match self {
            Self::Auto => !has_gpu,
            Self::Gpu => false,
            Self::Software => true,
        }
    }
}

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
        crate::backend::data_dir()
            .map(|d| crate::settings::Settings::load(&d).renderer)
            .unwrap_or_default()
    });
    chosen.compositing_off(has_gpu())
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
}
