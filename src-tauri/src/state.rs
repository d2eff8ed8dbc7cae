//! What the app holds while it runs: its settings, the backend it talks to (the
//! sandbox, or a real service), its keys and its mission history.

use crate::settings::Settings;
use casebook_core::citations::CitationClient;
use casebook_core::connection::{Connection, parse_base_url};
use casebook_core::keys::{ApiKey, KeyStore, Service};
use casebook_core::missions::InvestigationClient;
use casebook_core::store::MissionStore;
use casebook_core::{Error, ErrorCode};
use casebook_sandbox::{Pace, RunningSandbox, SandboxConfig};
use serde::Serialize;
use std::path::PathBuf;
use tokio::sync::Mutex;
use ts_rs::TS;

/// Which backend the app talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum BackendMode {
    /// The built-in sandbox on loopback: the default until a real account is set up.
    Sandbox,
    /// A real service at a user-chosen base URL.
    Remote,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct AppInfo {
    pub version: String,
    pub mode: BackendMode,
    /// Where requests go now: the sandbox's loopback URL in sandbox mode.
    pub base_url: String,
    pub data_dir: String,
    pub settings: Settings,
}

/// The backend in use: a connection, and the sandbox when it is the sandbox.
struct Backend {
    conn: Connection,
    sandbox: Option<RunningSandbox>,
}

pub struct AppState {
    pub data_dir: PathBuf,
    pub keys: KeyStore,
    pub missions: MissionStore,
    settings: Mutex<Settings>,
    backend: Mutex<Backend>,
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

/// The sandbox's pace in the app: realistic, unless `CASEBOOK_SANDBOX_PACE=instant`.
fn sandbox_pace() -> Pace {
    match std::env::var("CASEBOOK_SANDBOX_PACE").as_deref() {
        Ok("instant") => Pace::Instant,
        _ => Pace::Realistic,
    }
}

async fn start_sandbox(data_dir: &std::path::Path) -> Result<RunningSandbox, Error> {
    casebook_sandbox::start(SandboxConfig {
        data_dir: Some(data_dir.join("sandbox")),
        pace: sandbox_pace(),
        ..SandboxConfig::default()
    })
    .await
    .map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("Cannot start the local sandbox: {e}"),
        )
    })
}

async fn backend_for(settings: &Settings, data_dir: &std::path::Path) -> Result<Backend, Error> {
    if settings.sandbox {
        let sandbox = start_sandbox(data_dir).await?;
        return Ok(Backend {
            conn: Connection::new(sandbox.base_url())?,
            sandbox: Some(sandbox),
        });
    }
    let url = settings.base_url.as_deref().ok_or_else(|| {
        Error::invalid_input("Set the services' base URL in Settings, or turn the sandbox on.")
    })?;
    Ok(Backend {
        conn: Connection::new(url)?,
        sandbox: None,
    })
}

impl AppState {
    /// Loads settings and connects: the sandbox by default.
    pub async fn start(data_dir: PathBuf) -> Result<Self, Error> {
        let mut settings = Settings::load(&data_dir);
        let backend = match backend_for(&settings, &data_dir).await {
            Ok(b) => b,
            Err(e) => {
                // A saved remote URL that no longer works must not keep the app from opening.
                tracing::warn!("falling back to the sandbox: {}", e.message);
                settings.sandbox = true;
                backend_for(&settings, &data_dir).await?
            }
        };
        let missions = MissionStore::open(&data_dir.join("casebook.db"))?;
        Ok(Self {
            keys: KeyStore::new(),
            missions,
            settings: Mutex::new(settings),
            backend: Mutex::new(backend),
            data_dir,
        })
    }

    pub async fn info(&self) -> AppInfo {
        let settings = self.settings.lock().await.clone();
        let backend = self.backend.lock().await;
        AppInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            mode: if backend.sandbox.is_some() {
                BackendMode::Sandbox
            } else {
                BackendMode::Remote
            },
            base_url: backend
                .conn
                .base_url()
                .as_str()
                .trim_end_matches('/')
                .to_owned(),
            data_dir: self.data_dir.display().to_string(),
            settings,
        }
    }

    pub async fn settings(&self) -> Settings {
        self.settings.lock().await.clone()
    }

    /// Applies and saves new settings, switching backend when the mode or URL
    /// changed. Nothing changes when the new backend cannot be set up.
    pub async fn update_settings(&self, new: Settings) -> Result<AppInfo, Error> {
        if let Some(url) = &new.base_url {
            parse_base_url(url)?;
        }
        if !new.sandbox && new.base_url.is_none() {
            return Err(Error::invalid_input(
                "Enter the services' base URL before turning the sandbox off.",
            ));
        }
        new.cite_options.validate()?;
        {
            let mut settings = self.settings.lock().await;
            let mut backend = self.backend.lock().await;
            let switch = settings.sandbox != new.sandbox
                || (!new.sandbox && settings.base_url != new.base_url);
            if switch {
                let next = backend_for(&new, &self.data_dir).await?;
                let old = std::mem::replace(&mut *backend, next);
                if let Some(s) = old.sandbox {
                    s.stop().await;
                }
            }
            new.save(&self.data_dir)?;
            *settings = new;
        }
        Ok(self.info().await)
    }

    /// The connection in use and the key for `service`: the sandbox's own key in
    /// sandbox mode, else the stored one.
    pub async fn connection(&self, service: Service) -> Result<(Connection, ApiKey), Error> {
        let (conn, sandbox_key) = {
            let b = self.backend.lock().await;
            (
                b.conn.clone(),
                b.sandbox.as_ref().map(|s| s.key().to_owned()),
            )
        };
        let key = match sandbox_key {
            Some(k) => ApiKey::parse(&k)?,
            None => self.keys.get(service).await?.ok_or_else(|| {
                Error::new(
                    ErrorCode::Unauthorized,
                    format!(
                        "No API key for the {} service: add one in Settings.",
                        match service {
                            Service::Citations => "citation",
                            Service::Investigations => "investigation",
                        }
                    ),
                )
            })?,
        };
        Ok((conn, key))
    }

    pub async fn citations(&self) -> Result<CitationClient, Error> {
        let (conn, key) = self.connection(Service::Citations).await?;
        Ok(CitationClient::new(conn, key))
    }

    pub async fn investigations(&self) -> Result<InvestigationClient, Error> {
        let (conn, key) = self.connection(Service::Investigations).await?;
        Ok(InvestigationClient::new(conn, key))
    }

    /// The base URL of the backend in use.
    pub async fn base_url(&self) -> String {
        self.backend
            .lock()
            .await
            .conn
            .base_url()
            .as_str()
            .trim_end_matches('/')
            .to_owned()
    }
}
