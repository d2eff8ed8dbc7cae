//! Where Casebook talks to: the embedded sandbox on loopback (the default until a
//! real account is connected) or a real service, with the key for each service.
//! Both front ends get their clients here, so the sandbox's life, the key lookup
//! and the "no key" message exist once.

use crate::citations::client::CitationClient;
use crate::error::{Error, ErrorCode, Result};
use crate::keys::{ApiKey, KeyStore, Service};
use crate::missions::client::InvestigationClient;
use crate::missions::store::MissionRecord;
use crate::net::connection::Connection;
use casebook_sandbox::{MissionProtocol, Pace, RunningSandbox, SandboxConfig};
use serde::Serialize;
use std::path::Path;
use ts_rs::TS;

/// Which backend is in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum BackendMode {
    /// The built-in sandbox on loopback.
    Sandbox,
    /// A real service at a user-chosen base URL.
    Remote,
}

/// How the embedded sandbox behaves: realistic by default. Tests and benchmarks ask
/// for instant missions or a fixed pace and length (the sandbox's `paceMs` and
/// `events` extensions), which are only ever sent to our own sandbox.
#[derive(Debug, Clone, Default)]
pub struct SandboxOptions {
    pub pace: Pace,
    pub mission_pace_ms: Option<u64>,
    pub mission_events: Option<u64>,
    /// The investigation service's wire protocol; `None`: eve's generation A, the
    /// embedded sandbox's default (the seeds show its continuation token).
    pub mission_protocol: Option<MissionProtocol>,
}

impl SandboxOptions {
    /// From `CASEBOOK_SANDBOX_PACE=instant`, `CASEBOOK_SANDBOX_MISSION_PACE_MS`,
    /// `CASEBOOK_SANDBOX_MISSION_EVENTS` and `CASEBOOK_SANDBOX_MISSION_PROTOCOL`
    /// (`legacy`, `eve-a`, `eve-b`, `eve-27`). Front ends call this only where test hooks
    /// are allowed.
    pub fn from_env() -> Result<Self> {
        let number = |var: &str| -> Result<Option<u64>> {
            match std::env::var(var) {
                Ok(raw) => raw.trim().parse().map(Some).map_err(|_| {
                    Error::invalid_input(format!("{var} must be a whole number, not {raw:?}."))
                }),
                Err(_) => Ok(None),
            }
        };
        Ok(Self {
            pace: match std::env::var("CASEBOOK_SANDBOX_PACE").as_deref() {
                Ok("instant") => Pace::Instant,
                _ => Pace::Realistic,
            },
            mission_pace_ms: number("CASEBOOK_SANDBOX_MISSION_PACE_MS")?,
            mission_events: number("CASEBOOK_SANDBOX_MISSION_EVENTS")?,
            mission_protocol: match std::env::var("CASEBOOK_SANDBOX_MISSION_PROTOCOL") {
                Ok(raw) => Some(
                    [
                        MissionProtocol::Legacy,
                        MissionProtocol::EveA,
                        MissionProtocol::EveB,
                        MissionProtocol::Eve27,
                    ]
                    .into_iter()
                    .find(|p| p.name() == raw.trim())
                    .ok_or_else(|| {
                        Error::invalid_input(format!(
                            "CASEBOOK_SANDBOX_MISSION_PROTOCOL must be legacy, eve-a, eve-b or eve-27, not {raw:?}."
                        ))
                    })?,
                ),
                Err(_) => None,
            },
        })
    }
}

/// A connection, and the sandbox behind it when it is the sandbox.
pub struct Backend {
    conn: Connection,
    /// The API base new missions start under (see [`crate::missions::client::agent`]).
    eve_base: String,
    sandbox: Option<RunningSandbox>,
    options: SandboxOptions,
    keys: KeyStore,
}

impl Backend {
    /// Starts the embedded sandbox, keeping its sessions under `data_dir` (in
    /// memory when `None`).
    pub async fn sandbox(data_dir: Option<&Path>, options: SandboxOptions) -> Result<Self> {
        let sandbox = casebook_sandbox::start(SandboxConfig {
            data_dir: data_dir.map(|d| d.join("sandbox")),
            pace: options.pace,
            mission_protocol: options.mission_protocol.unwrap_or(MissionProtocol::EveA),
            ..SandboxConfig::default()
        })
        .await
        .map_err(|e| Error::internal(format!("Cannot start the local sandbox: {e}")))?;
        Ok(Self {
            conn: Connection::new(sandbox.base_url())?,
            eve_base: crate::missions::client::agent::DEFAULT_API_BASE.to_owned(),
            sandbox: Some(sandbox),
            options,
            keys: KeyStore::new(),
        })
    }

    /// A real service at `base_url` (https, or http on loopback).
    pub fn remote(base_url: &str) -> Result<Self> {
        Ok(Self {
            conn: Connection::new(base_url)?,
            eve_base: crate::missions::client::agent::DEFAULT_API_BASE.to_owned(),
            sandbox: None,
            options: SandboxOptions::default(),
            keys: KeyStore::new(),
        })
    }

    pub fn mode(&self) -> BackendMode {
        match self.sandbox {
            Some(_) => BackendMode::Sandbox,
            None => BackendMode::Remote,
        }
    }

    /// New missions start under the API base `raw` (empty: `/eve/v1`); refused with the
    /// reason when it is not a path.
    pub fn with_eve_base(mut self, raw: &str) -> Result<Self> {
        self.set_eve_base(raw)?;
        Ok(self)
    }

    pub fn set_eve_base(&mut self, raw: &str) -> Result<()> {
        self.eve_base = crate::missions::client::agent::parse_api_base(raw)?;
        Ok(())
    }

    /// The API base new missions start under.
    pub fn eve_base(&self) -> &str {
        &self.eve_base
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The base URL without a trailing slash, as missions record it.
    pub fn base_url(&self) -> String {
        self.conn
            .base_url()
            .as_str()
            .trim_end_matches('/')
            .to_owned()
    }

    /// The sandbox's own key in sandbox mode, else the stored one.
    pub async fn key(&self, service: Service) -> Result<ApiKey> {
        if let Some(s) = &self.sandbox {
            return ApiKey::parse(s.key());
        }
        self.keys.get(service).await?.ok_or_else(|| {
            Error::new(
                ErrorCode::Unauthorized,
                format!(
                    "No API key for the {} service: add one in Settings, run `casebook keys set {}`, or set {}.",
                    service.as_str(),
                    service.as_str(),
                    service.env_var()
                ),
            )
        })
    }

    pub async fn citations(&self) -> Result<CitationClient> {
        Ok(CitationClient::new(
            self.conn.clone(),
            self.key(Service::Citations).await?,
        ))
    }

    /// The investigation service under the API base new missions start under.
    pub async fn investigations(&self) -> Result<InvestigationClient> {
        self.investigations_at(&self.eve_base).await
    }

    /// The investigation service under `api_base` (a mission's own, stored when it started).
    pub async fn investigations_at(&self, api_base: &str) -> Result<InvestigationClient> {
        Ok(
            InvestigationClient::new(self.conn.clone(), self.key(Service::Investigations).await?)
                .at_base(api_base),
        )
    }

    /// Fields besides `message` for a new session: the sandbox's extensions in
    /// sandbox mode, nothing for a real service.
    pub fn mission_extensions(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut extra = serde_json::Map::new();
        if self.sandbox.is_some() {
            if let Some(ms) = self.options.mission_pace_ms {
                extra.insert("paceMs".into(), ms.into());
            }
            if let Some(n) = self.options.mission_events {
                extra.insert("events".into(), n.into());
            }
        }
        extra
    }

    /// Whether `record` was started on this backend. The sandbox gets a new port
    /// each start, so in sandbox mode any loopback mission is the sandbox's (it
    /// keeps its sessions in the data folder).
    pub fn check_owns(&self, record: &MissionRecord) -> Result<()> {
        let here = self.base_url();
        if record.base_url == here || (self.sandbox.is_some() && is_loopback(&record.base_url)) {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::Conflict,
            format!(
                "This mission was started on {}, and Casebook now talks to {here}. Switch back in Settings (or pass --base-url) to follow it.",
                record.base_url
            ),
        ))
    }

    /// Stops the sandbox, if this is the sandbox; its open streams end.
    pub async fn stop(self) {
        if let Some(s) = self.sandbox {
            s.stop().await;
        }
    }
}

fn is_loopback(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| match u.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_urls() {
        assert!(is_loopback("http://127.0.0.1:4321"));
        assert!(is_loopback("http://localhost:1"));
        assert!(is_loopback("http://[::1]:1"));
        assert!(!is_loopback("https://api.example.com"));
        assert!(!is_loopback("not a url"));
    }

    #[tokio::test]
    async fn sandbox_extensions_never_reach_a_real_service() {
        let options = SandboxOptions {
            mission_pace_ms: Some(5),
            mission_events: Some(10),
            ..SandboxOptions::default()
        };
        let sandbox = Backend::sandbox(None, options).await.unwrap();
        assert_eq!(sandbox.mode(), BackendMode::Sandbox);
        let extra = sandbox.mission_extensions();
        assert_eq!(extra["paceMs"], 5);
        assert_eq!(extra["events"], 10);
        sandbox.stop().await;
        let remote = Backend::remote("https://api.example.com").unwrap();
        assert!(remote.mission_extensions().is_empty());
        assert_eq!(remote.base_url(), "https://api.example.com");
    }
}
