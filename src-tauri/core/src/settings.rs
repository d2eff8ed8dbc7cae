//! What the user chose, kept in `settings.json` in the data directory. Never a key:
//! keys live only in the OS keyring.

use crate::citations::CiteOptions;
use crate::renderer::Renderer;
use crate::{Error, save};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
#[ts(rename_all = "camelCase")]
pub struct Settings {
    /// Talk to the built-in sandbox instead of `base_url`.
    pub sandbox: bool,
    /// The real services' base URL, once the user has connected an account.
    pub base_url: Option<String>,
    /// The citation options last used.
    pub cite_options: CiteOptions,
    /// How the windows are drawn; takes effect at the next start.
    pub renderer: Renderer,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            sandbox: true,
            base_url: None,
            cite_options: CiteOptions::default(),
            renderer: Renderer::default(),
        }
    }
}

impl Settings {
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join("settings.json")
    }

    /// The saved settings; defaults when there are none. A damaged file is set
    /// aside (not deleted) so nothing the user had is lost.
    pub fn load(data_dir: &Path) -> Self {
        let path = Self::path(data_dir);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!("settings.json is not readable ({e}); starting from defaults");
                let _ = std::fs::rename(&path, path.with_extension("json.damaged"));
                Self::default()
            }),
            Err(_) => Self::default(),
        }
    }

    pub fn save(&self, data_dir: &Path) -> Result<(), Error> {
        let bytes =
            serde_json::to_vec_pretty(self).map_err(|e| Error::invalid_input(e.to_string()))?;
        save::write_atomic(&Self::path(data_dir), &bytes, true)
    }
}
