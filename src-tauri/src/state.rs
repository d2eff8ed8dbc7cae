//! What the app holds while it runs: where it talks to, its keys, its sandbox.

use casebook_core::keys::KeyStore;
use casebook_core::{Error, ErrorCode};
use casebook_sandbox::{RunningSandbox, SandboxConfig};
use serde::Serialize;
use std::path::PathBuf;
use ts_rs::TS;

/// Which backend the app talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum Mode {
    /// The built-in sandbox on loopback: the default until a real account is set up.
    Sandbox,
    /// A real service at a user-chosen base URL.
    Remote,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct AppInfo {
    pub version: String,
    pub mode: Mode,
    pub base_url: String,
    pub data_dir: String,
}

pub struct AppState {
    info: AppInfo,
    pub keys: KeyStore,
    // Kept alive for the app's lifetime: dropping it stops the sandbox.
    _sandbox: Option<RunningSandbox>,
}

/// `CASEBOOK_DATA_DIR` wins over the platform's app-data directory, so each test
/// can start from nothing.
pub fn data_dir(platform_default: Option<PathBuf>) -> Result<PathBuf, Error> {
    let dir = std::env::var_os("CASEBOOK_DATA_DIR")
        .map(PathBuf::from)
        .or(platform_default)
        .ok_or_else(|| Error::new(ErrorCode::Io, "No data directory: set CASEBOOK_DATA_DIR."))?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(&format!("Cannot create {}", dir.display()), &e))?;
    Ok(dir)
}

impl AppState {
    /// Starts in sandbox mode: the sandbox serves on a free loopback port.
    pub async fn start(data_dir: PathBuf) -> Result<Self, Error> {
        let sandbox = casebook_sandbox::start(SandboxConfig {
            data_dir: Some(data_dir.join("sandbox")),
            ..SandboxConfig::default()
        })
        .await
        .map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("Cannot start the local sandbox: {e}"),
            )
        })?;
        Ok(Self {
            info: AppInfo {
                version: env!("CARGO_PKG_VERSION").to_owned(),
                mode: Mode::Sandbox,
                base_url: sandbox.base_url().to_owned(),
                data_dir: data_dir.display().to_string(),
            },
            keys: KeyStore::new(),
            _sandbox: Some(sandbox),
        })
    }

    pub fn info(&self) -> &AppInfo {
        &self.info
    }
}
