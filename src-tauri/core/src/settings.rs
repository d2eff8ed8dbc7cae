//! What the user chose, kept in `settings.json` in the data directory. Never a key:
//! keys live only in the OS keyring.

use crate::citations::client::CiteOptions;
use crate::{Error, save};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use ts_rs::TS;

/// A settings file is a few hundred bytes; one far larger was not written by Casebook.
const MAX_FILE_BYTES: u64 = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
#[ts(rename_all = "camelCase")]
pub struct Settings {
    /// Talk to the built-in sandbox instead of `base_url`.
    pub sandbox: bool,
    /// The real services' base URL, once the user has connected an account.
    pub base_url: Option<String>,
    /// The investigation service's API base under it: `None` for eve's single root agent
    /// (`/eve/v1`), or one agent of several (`/eve/<agent>/v1`, `/eve/agents/<agent>/eve/v1`).
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eve_base: Option<String>,
    /// The citation options last used.
    pub cite_options: CiteOptions,
    /// How the windows are drawn; takes effect at the next start.
    pub renderer: Renderer,
    /// Cited Word documents are saved for review in Word (each citation a tracked
    /// change) unless asked otherwise: the choice last made.
    pub save_for_review: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            sandbox: true,
            base_url: None,
            eve_base: None,
            cite_options: CiteOptions::default(),
            renderer: Renderer::default(),
            save_for_review: false,
        }
    }
}

impl Settings {
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join("settings.json")
    }

    /// The saved settings; defaults when there are none. A damaged or oversized file
    /// is set aside (not deleted) so nothing the user had is lost.
    pub fn load(data_dir: &Path) -> Self {
        let path = Self::path(data_dir);
        let settings = match save::read_small(&path, MAX_FILE_BYTES) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| e.to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err(e.to_string()),
            Err(_) => return Self::default(),
        };
        settings.unwrap_or_else(|why| {
            tracing::warn!("settings.json is not readable ({why}); starting from defaults");
            let _ = std::fs::rename(&path, path.with_extension("json.damaged"));
            Self::default()
        })
    }

    pub fn save(&self, data_dir: &Path) -> Result<(), Error> {
        let bytes =
            serde_json::to_vec_pretty(self).map_err(|e| Error::invalid_input(e.to_string()))?;
        save::write_atomic(&Self::path(data_dir), &bytes, true)
    }
}

/// How WebKit draws (see [`crate::desktop::renderer`]): the user's choice.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_or_oversized_file_is_set_aside_and_defaults_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = Settings::path(dir.path());
        let chosen = Settings {
            sandbox: false,
            ..Settings::default()
        };
        chosen.save(dir.path()).unwrap();
        assert_eq!(Settings::load(dir.path()), chosen);
        let huge = format!(
            "{{\"sandbox\": false, \"pad\": \"{}\"}}",
            "x".repeat(70_000)
        );
        for bad in ["{\"sandbox\": fals".to_owned(), huge] {
            std::fs::write(&path, &bad).unwrap();
            assert_eq!(Settings::load(dir.path()), Settings::default());
            assert!(!path.exists());
            let aside = std::fs::read_to_string(path.with_extension("json.damaged")).unwrap();
            assert_eq!(aside, bad, "set aside whole");
        }
        assert_eq!(
            Settings::load(dir.path()),
            Settings::default(),
            "none at all"
        );
    }
}
