//! Casebook as both front ends use it: settings, the backend, keys, the mission
//! history and its follower, and the citing jobs. The Tauri shell and the CLI are
//! adapters over [`Casebook`]; nothing here knows about windows or terminals.

use crate::account::{self, AccountView, Me};
use crate::backend::{Backend, BackendMode, SandboxOptions};
use crate::citations::client::{CitationClient, CiteOptions, Preview};
use crate::citations::documents::DocumentInfo;
use crate::citations::jobs::{
    CiteJobs, CiteOutcome, CiteProgress, CiteSource, SaveReport, SavedFile,
};
use crate::citations::preview;
use crate::error::{Error, ErrorCode, Result};
use crate::keys::{KeyStatus, KeyStore, Service, SessionCookie, SessionSource};
use crate::missions::client::agent::AgentInfo;
use crate::missions::client::{
    CancelAck, Delivered, Dialect, FollowUp, InvestigationClient, MissionSpec,
};
use crate::missions::conversation::{Conversation, ConversationSummary, Source};
use crate::missions::export::transcript::{self, ExportFormat};
use crate::missions::follower::{Feed, Follower, Observer, Sink};
use crate::missions::store::across::MissionHits;
use crate::missions::store::conversations::{ConversationHits, ConversationPage};
use crate::missions::store::{
    EventFilter, EventPage, KindCount, MissionRecord, MissionStatus, MissionStore,
};
use crate::missions::stream::Reply;
use crate::missions::stream::child::ChildLimits;
use crate::missions::subagents::{self, SubAgent};
use crate::save;
use crate::settings::Settings;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::Mutex;
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct AppInfo {
    pub version: String,
    pub mode: BackendMode,
    /// Where requests go now: the sandbox's loopback URL in sandbox mode.
    pub base_url: String,
    /// The investigation service's API base new missions start under.
    pub eve_base: String,
    pub data_dir: String,
    pub settings: Settings,
    /// Test builds only: the UI exposes its test globals.
    pub test_hooks: bool,
}

/// The health indicator.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Health {
    pub ok: bool,
    pub base_url: String,
    pub detail: String,
}

/// How a front end starts Casebook.
pub struct Config {
    pub data_dir: PathBuf,
    /// The app follows `settings.json` (and switches when it changes); the CLI names
    /// its backend on the command line, or none for commands that need no service.
    pub backend: BackendChoice,
    pub sandbox: SandboxOptions,
    pub test_hooks: bool,
}

pub enum BackendChoice {
    FromSettings,
    Fixed(Option<Box<Backend>>),
}

pub struct Casebook {
    data_dir: PathBuf,
    pub keys: KeyStore,
    pub store: MissionStore,
    pub jobs: CiteJobs,
    follower: Arc<Follower>,
    settings: Mutex<Settings>,
    backend: Mutex<Option<Backend>>,
    follows_settings: bool,
    sandbox: SandboxOptions,
    test_hooks: bool,
    /// Reports handed to the Cite view ("Cite this report"), not yet taken by it.
    handed_over: std::sync::Mutex<Vec<String>>,
}

async fn backend_for(
    settings: &Settings,
    data_dir: &Path,
    sandbox: &SandboxOptions,
) -> Result<Backend> {
    let eve_base = settings.eve_base.as_deref().unwrap_or("");
    // Checked first: a sandbox started and then refused would be left running.
    crate::missions::client::agent::parse_api_base(eve_base)?;
    if settings.sandbox {
        return Backend::sandbox(Some(data_dir), sandbox.clone())
            .await?
            .with_eve_base(eve_base);
    }
    let url = settings.base_url.as_deref().ok_or_else(|| {
        Error::invalid_input("Set the services' base URL in Settings, or turn the sandbox on.")
    })?;
    Backend::remote(url)?.with_eve_base(eve_base)
}

impl Casebook {
    /// Opens the data folder's history and connects.
    pub async fn start(config: Config, observer: Arc<dyn Observer>) -> Result<Arc<Self>> {
        let data_dir = config.data_dir;
        std::fs::create_dir_all(&data_dir)
            .map_err(|e| Error::io(&format!("Cannot create {}", data_dir.display()), &e))?;
        // Settings are saved here; a save killed before its rename left its temporary.
        crate::save::remove_stale_temporaries(&data_dir);
        let mut settings = Settings::load(&data_dir);
        let (backend, follows_settings) = match config.backend {
            BackendChoice::Fixed(b) => (b.map(|b| *b), false),
            BackendChoice::FromSettings => {
                let b = match backend_for(&settings, &data_dir, &config.sandbox).await {
                    Ok(b) => b,
                    Err(e) => {
                        // A saved remote URL that no longer works must not keep the app from opening.
                        tracing::warn!("falling back to the sandbox: {}", e.message);
                        settings.sandbox = true;
                        settings.eve_base = None;
                        backend_for(&settings, &data_dir, &config.sandbox).await?
                    }
                };
                (Some(b), true)
            }
        };
        let store = MissionStore::open(&data_dir.join("casebook.db"))?;
        Ok(Arc::new(Self {
            follower: Follower::new(store.clone(), observer),
            store,
            keys: KeyStore::new(),
            jobs: CiteJobs::default(),
            settings: Mutex::new(settings),
            backend: Mutex::new(backend),
            follows_settings,
            sandbox: config.sandbox,
            test_hooks: config.test_hooks,
            handed_over: std::sync::Mutex::default(),
            data_dir,
        }))
    }

    fn no_backend() -> Error {
        Error::invalid_input(
            "No service to talk to: pass --base-url URL (or set CASEBOOK_BASE_URL), or --sandbox.",
        )
    }

    async fn with_backend<T>(&self, f: impl FnOnce(&Backend) -> T) -> Result<T> {
        let b = self.backend.lock().await;
        b.as_ref().map(f).ok_or_else(Self::no_backend)
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub async fn info(&self) -> AppInfo {
        let settings = self.settings.lock().await.clone();
        let (mode, base_url, eve_base) = self
            .with_backend(|b| (b.mode(), b.base_url(), b.eve_base().to_owned()))
            .await
            .unwrap_or((BackendMode::Remote, String::new(), String::new()));
        AppInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            mode,
            base_url,
            eve_base,
            data_dir: self.data_dir.display().to_string(),
            settings,
            test_hooks: self.test_hooks,
        }
    }

    /// Applies and saves new settings, switching backend when the mode or URL
    /// changed. Nothing changes when the new backend cannot be set up.
    pub async fn update_settings(&self, mut new: Settings) -> Result<AppInfo> {
        if let Some(url) = &new.base_url {
            crate::net::connection::parse_base_url(url)?;
        }
        // Kept as checked; the default is kept as none, so it follows eve's if that moves.
        let eve_base =
            crate::missions::client::agent::parse_api_base(new.eve_base.as_deref().unwrap_or(""))?;
        new.eve_base =
            (eve_base != crate::missions::client::agent::DEFAULT_API_BASE).then_some(eve_base);
        if !new.sandbox && new.base_url.is_none() {
            return Err(Error::invalid_input(
                "Enter the services' base URL before turning the sandbox off.",
            ));
        }
        new.cite_options.validated()?;
        {
            let mut settings = self.settings.lock().await;
            let mut backend = self.backend.lock().await;
            let switch = self.follows_settings
                && (settings.sandbox != new.sandbox
                    || (!new.sandbox && settings.base_url != new.base_url));
            if switch {
                let next = backend_for(&new, &self.data_dir, &self.sandbox).await?;
                if let Some(old) = backend.replace(next) {
                    old.stop().await;
                }
            } else if self.follows_settings
                && let Some(b) = backend.as_mut()
            {
                // Missions already started keep the base they were started on (stored).
                b.set_eve_base(new.eve_base.as_deref().unwrap_or(""))?;
            }
            new.save(&self.data_dir)?;
            *settings = new;
        }
        Ok(self.info().await)
    }

    pub async fn base_url(&self) -> Result<String> {
        self.with_backend(Backend::base_url).await
    }

    pub async fn health(&self) -> Result<Health> {
        let conn = self.with_backend(|b| b.connection().clone()).await?;
        let base_url = conn.base_url().as_str().trim_end_matches('/').to_owned();
        Ok(match conn.health().await {
            Ok(h) => Health {
                ok: true,
                base_url,
                detail: h.status.unwrap_or_else(|| "answering".into()),
            },
            Err(e) => Health {
                ok: false,
                base_url,
                detail: e.message,
            },
        })
    }

    // Keys.

    pub async fn key_status(&self) -> Result<Vec<KeyStatus>> {
        let mut out = Vec::new();
        for service in Service::ALL {
            out.push(self.keys.status(service).await?);
        }
        Ok(out)
    }

    pub async fn set_key(&self, service: Service, key: &str) -> Result<KeyStatus> {
        self.keys.set(service, key).await?;
        self.keys.status(service).await
    }

    pub async fn delete_key(&self, service: Service) -> Result<KeyStatus> {
        self.keys.delete(service).await?;
        self.keys.status(service).await
    }

    // The account.

    /// The account the stored session belongs to, as `GET /citations/api/me` says.
    /// A session the service no longer accepts is [`AccountView::Expired`], not an error.
    pub async fn account(&self) -> Result<AccountView> {
        let conn = self.with_backend(|b| b.connection().clone()).await?;
        account::view(&conn, &self.keys).await
    }

    /// Keeps `cookie_header` (the cookies the service's console set) as the session,
    /// once the account endpoint accepts it. Until then: an `unauthorized` error,
    /// and nothing is stored.
    pub async fn sign_in_with_cookies(&self, cookie_header: &str) -> Result<AccountView> {
        let cookie = SessionCookie::parse(cookie_header)?;
        let conn = self.with_backend(|b| b.connection().clone()).await?;
        match account::fetch(&conn, &cookie).await? {
            Me::Account(account) => {
                self.keys.set_session(&conn.origin(), &cookie).await?;
                Ok(AccountView::SignedIn {
                    account,
                    source: SessionSource::Keyring,
                })
            }
            Me::Unauthorized(_) => Err(Error::new(
                ErrorCode::Unauthorized,
                "The service does not accept these cookies as a session yet: sign in in the console window.",
            )
            .with_status(401)),
        }
    }

    /// Forgets the stored session. The environment's, if set, still applies.
    pub async fn sign_out(&self) -> Result<AccountView> {
        self.keys.delete_session().await?;
        match self.keys.get_session().await? {
            Some(_) => self.account().await,
            None => Ok(AccountView::SignedOut),
        }
    }

    // Citing.

    pub async fn citations(&self) -> Result<CitationClient> {
        let b = self.backend.lock().await;
        b.as_ref().ok_or_else(Self::no_backend)?.citations().await
    }

    /// Checks dropped or browsed files, and finds their References sections with
    /// Casebook's own reading, so a card can say before citing that there is none.
    pub async fn inspect(&self, paths: Vec<String>) -> Vec<DocumentInfo> {
        preview::inspect_documents(paths).await
    }

    /// What the service will consider, before anything is cited.
    pub async fn preview(&self, source: &CiteSource) -> Result<Preview> {
        preview::preview_with(&self.citations().await?, source).await
    }

    pub async fn cite(
        &self,
        source: CiteSource,
        options: CiteOptions,
        progress: impl Fn(CiteProgress) + Send + Sync + 'static,
    ) -> Result<CiteOutcome> {
        let options = options.validated()?;
        let client = self.citations().await?;
        self.jobs.run(client, source, options, progress).await
    }

    pub async fn save_cited(&self, job_id: &str, dest: PathBuf) -> Result<SavedFile> {
        self.jobs.save(job_id, dest).await
    }

    pub async fn save_for_review(&self, job_id: &str, dest: PathBuf) -> Result<SavedFile> {
        self.jobs.save_review(job_id, dest).await
    }

    pub async fn save_review_list(&self, job_id: &str, dest: PathBuf) -> Result<SavedFile> {
        self.jobs.save_review_list(job_id, dest).await
    }

    /// Saves each result into `folder`; with `review`, Word documents as review copies.
    pub async fn save_all_cited(
        &self,
        job_ids: &[String],
        folder: &Path,
        review: bool,
    ) -> Result<Vec<SaveReport>> {
        self.jobs.save_all(job_ids, folder, review).await
    }

    // Missions.

    pub async fn investigations(&self) -> Result<InvestigationClient> {
        let b = self.backend.lock().await;
        b.as_ref()
            .ok_or_else(Self::no_backend)?
            .investigations()
            .await
    }

    /// The client for the service, and the API base, `record` was started on.
    pub async fn client_for(&self, record: &MissionRecord) -> Result<InvestigationClient> {
        let b = self.backend.lock().await;
        let b = b.as_ref().ok_or_else(Self::no_backend)?;
        b.check_owns(record)?;
        b.investigations_at(&record.api_base).await
    }

    /// What the agent at the API base new missions start under says of itself; `None`
    /// when the server has no info route.
    pub async fn agent_info(&self) -> Result<Option<AgentInfo>> {
        self.investigations().await?.agent_info().await
    }

    /// Starts a mission and records it; it is followed once someone subscribes (or
    /// at once when `follow` is set).
    pub async fn start_mission(self: &Arc<Self>, spec: &MissionSpec) -> Result<MissionRecord> {
        spec.validate()?;
        let (client, extra, base_url) = {
            let b = self.backend.lock().await;
            let b = b.as_ref().ok_or_else(Self::no_backend)?;
            (
                b.investigations().await?,
                b.mission_extensions(),
                b.base_url(),
            )
        };
        let session = client.create_session_with(spec, extra).await?;
        let api_base = client.api_base().to_owned();
        let record = (self.store)
            .insert_at(&session, spec, &base_url, &api_base)
            .await?;
        self.follower.resume_created(&record, Ok(client));
        Ok(record)
    }

    /// Sends a waiting mission its next message (or answers), then follows the turn it
    /// starts. The newest continuation token goes with it when the service gave one.
    pub async fn follow_up_mission(
        self: &Arc<Self>,
        session_id: &str,
        follow_up: &FollowUp,
    ) -> Result<Delivered> {
        // An answer goes once the turn has parked on its question: eve before 0.70 asks
        // and then ends the turn with the session's wait, whose token the answer must
        // carry, so one sent in between would be taken as steering under a stale token.
        // (A message may steer a running turn on purpose: it goes at once.)
        if matches!(follow_up, FollowUp::Answers(_)) {
            let parked = tokio::time::timeout(
                std::time::Duration::from_secs(30),
                self.follower.finished(session_id),
            )
            .await;
            if parked.is_err() {
                tracing::info!(session = %session_id, "the turn has not parked after 30 s; answering anyway");
            }
        }
        let record = self.store.require(session_id).await?;
        let client = self.client_for(&record).await?;
        let dialect = Dialect::of_stream(self.store.stream_version(session_id).await?);
        let delivered = client
            .follow_up(
                session_id,
                follow_up,
                record.continuation_token.as_deref(),
                dialect,
            )
            .await?;
        // The service took it: a new turn (or the held one) runs.
        self.store
            .set_status(session_id, MissionStatus::Running)
            .await?;
        // A message to eve is followed to the turn that takes it: steered into the one
        // running, or queued for the next. The watcher of the running turn (if one) goes
        // on past that turn's end until then.
        if let Some(reply) = Self::reply_to_await(follow_up, &delivered, dialect) {
            self.follower.await_reply(&record, Ok(client), reply).await;
            return Ok(delivered);
        }
        // The watcher of the last turn has ended; a new one follows from the stored cursor.
        self.follower.finished(session_id).await;
        let record = self.store.require(session_id).await?;
        // A watcher still reading the last turn when this was sent may have followed the
        // new turn to its end too (one stream): then there is nothing left to follow, and a
        // new watcher would wait on a session that waits for the person.
        if record.status == MissionStatus::Running {
            self.follower.resume(&record, Ok(client));
        }
        Ok(delivered)
    }

    /// How the turn that takes a message is known: by the delivery id eve gave, or, from
    /// an eve that gives none (generation A), by the message's words, which that turn
    /// repeats. Answers resume the held turn, and the seeds' servers repeat nothing.
    fn reply_to_await(follow_up: &FollowUp, sent: &Delivered, dialect: Dialect) -> Option<Reply> {
        let text = match follow_up {
            FollowUp::Message(text) | FollowUp::Attached(text, _) => text.trim(),
            FollowUp::Answers(_) => return None,
        };
        match &sent.delivery_id {
            Some(id) => Some(Reply::Delivery(id.clone())),
            None if dialect.eve && !text.is_empty() => Some(Reply::Words(text.to_owned())),
            None => None,
        }
    }

    /// The mission as a conversation, whole and up to date with its stored records.
    pub async fn mission_conversation(&self, session_id: &str) -> Result<Conversation> {
        self.store.require(session_id).await?;
        Ok(self.store.conversation(session_id).await?.0)
    }

    /// Opens the sub-agent `which` (the call that delegated to it, or its session id) of a
    /// mission: its stream is read now, and only now, on from where the last opening
    /// stopped, through the parent's route on the mission's service and API base (or the
    /// stream path its record named), and its conversation comes back. What was read is
    /// kept: with the service unreachable, what was kept is shown, saying so.
    pub async fn open_subagent(&self, session_id: &str, which: &str) -> Result<SubAgent> {
        let record = self.store.require(session_id).await?;
        let client = self.client_for(&record).await;
        subagents::open(
            &self.store,
            client,
            session_id,
            which,
            ChildLimits::default(),
        )
        .await
    }

    /// The store, for a read of `session_id`: a mission not in the history is refused as
    /// not found rather than read as empty.
    async fn known(&self, session_id: &str) -> Result<&MissionStore> {
        self.store.require(session_id).await?;
        Ok(&self.store)
    }

    /// What was said, what the mission asks and which sign-ins it waits for.
    pub async fn mission_summary(&self, session_id: &str) -> Result<ConversationSummary> {
        Ok(self.mission_conversation(session_id).await?.summary())
    }

    /// At most `limit` conversation items from index `offset`.
    pub async fn mission_items(
        &self,
        session_id: &str,
        offset: u32,
        limit: u32,
    ) -> Result<ConversationPage> {
        self.known(session_id)
            .await?
            .conversation_items(session_id, offset, limit)
            .await
    }

    /// The sources found, from the `offset`-th.
    pub async fn mission_sources(
        &self,
        session_id: &str,
        offset: u32,
        limit: u32,
    ) -> Result<Vec<Source>> {
        self.known(session_id)
            .await?
            .conversation_sources(session_id, offset, limit)
            .await
    }

    /// The conversation items whose text has `query`.
    pub async fn search_mission(
        &self,
        session_id: &str,
        query: &str,
        limit: u32,
    ) -> Result<ConversationHits> {
        self.known(session_id)
            .await?
            .search_conversation(session_id, query, limit)
            .await
    }

    /// Every mission in the history searched at once, the best hits first.
    pub async fn search_missions(&self, query: &str, limit: u32) -> Result<MissionHits> {
        self.store.search_missions(query, limit).await
    }

    /// Makes sure `session_id` is in the history, so a mission started elsewhere can
    /// be followed (after `last_event_id` when given) and stored like any other.
    pub async fn adopt_mission(
        &self,
        session_id: &str,
        last_event_id: Option<String>,
    ) -> Result<()> {
        if self.store.get(session_id).await?.is_some() {
            return Ok(());
        }
        // Refused before it is recorded: an id like `..` would never name a session.
        crate::missions::client::session_path(session_id, "")?;
        let (base_url, api_base) = self
            .with_backend(|b| (b.base_url(), b.eve_base().to_owned()))
            .await?;
        (self.store)
            .adopt_at(session_id, &base_url, &api_base, last_event_id)
            .await
    }

    /// One page of the mission's events that pass `filter` (from the end when `offset` is
    /// `None`), and how many pass.
    pub async fn mission_events(
        &self,
        session_id: &str,
        filter: &EventFilter,
        offset: Option<u64>,
        limit: u32,
    ) -> Result<EventPage> {
        self.known(session_id)
            .await?
            .page(session_id, filter, offset, limit)
            .await
    }

    pub async fn mission_kinds(&self, session_id: &str) -> Result<Vec<KindCount>> {
        self.store.kinds(session_id).await
    }

    pub async fn list_missions(&self) -> Result<Vec<MissionRecord>> {
        self.store.list().await
    }

    pub async fn mission(&self, session_id: &str) -> Result<MissionRecord> {
        self.store.require(session_id).await
    }

    /// A mission window's subscription: the mission, its conversation's newest items, then
    /// what each batch of records changes; the records themselves only with `records` (the
    /// raw view): at 50,000 records each one passed on anyway left the web process holding
    /// more memory for it. A mission stored as waiting is asked for once from its stored
    /// cursor ([`Self::watch_asking`]): another client may have replied or answered since,
    /// or its history may have expired.
    pub async fn watch_window(
        self: &Arc<Self>,
        session_id: &str,
        label: &str,
        sink: Sink,
        records: bool,
    ) -> Result<()> {
        let feed = if records {
            Feed::RECORDS
        } else {
            Feed::CONVERSATION
        };
        self.watch_asking(session_id, label, sink, feed).await
    }

    /// Whether the reader looks at the window `label` (focused and shown): one they do
    /// not is sent what its missions' records change once a second, and at once what it
    /// was held when looked at again.
    pub async fn window_looked_at(&self, label: &str, looked_at: bool) {
        self.follower.set_looked_at(label, looked_at).await
    }

    /// Sends the mission's history to `sink`, then what is new while it is followed, as
    /// `feed` says.
    pub async fn watch(
        self: &Arc<Self>,
        session_id: &str,
        label: &str,
        sink: Sink,
        feed: Feed,
    ) -> Result<()> {
        let record = self.store.require(session_id).await?;
        let client =
            if Follower::should_follow(record.status) && !self.follower.is_running(session_id) {
                Some(self.client_for(&record).await)
            } else {
                None
            };
        self.follower
            .subscribe(&record, client, label, sink, feed)
            .await
    }

    /// [`Self::watch`], asking the server from the stored cursor even when the mission is
    /// stored as waiting for the person (another client may have replied): `mission watch`.
    pub async fn watch_asking(
        self: &Arc<Self>,
        session_id: &str,
        label: &str,
        sink: Sink,
        feed: Feed,
    ) -> Result<()> {
        let record = self.store.require(session_id).await?;
        // An expired history is final: said from what is stored, the service not asked.
        let settled = !Follower::should_follow(record.status);
        // With no service configured there is nowhere to ask: what is stored is shown. A
        // session that is over (complete, failed) can have nothing new to ask for.
        let over = matches!(
            record.status,
            MissionStatus::Expired | MissionStatus::Complete | MissionStatus::Failed
        );
        if self.follower.is_running(session_id) || !settled || over || !self.has_service().await {
            return self.watch(session_id, label, sink, feed).await;
        }
        let client = self.client_for(&record).await;
        (self.follower)
            .subscribe_asking(&record, client, label, sink, feed)
            .await
    }

    /// Whether a service is configured to talk to (the CLI may run without one).
    pub async fn has_service(&self) -> bool {
        self.backend.lock().await.is_some()
    }

    /// Waits until the mission is no longer followed.
    pub async fn watch_finished(&self, session_id: &str) {
        self.follower.finished(session_id).await
    }

    pub fn is_following(&self, session_id: &str) -> bool {
        self.follower.is_running(session_id)
    }

    pub fn unsubscribe(&self, label: &str) {
        self.follower.unsubscribe(label)
    }

    /// Says where Casebook talks to, and follows again, in the background, the
    /// missions that were live when it stopped (their windows stay closed).
    pub async fn ready(self: &Arc<Self>) {
        let info = self.info().await;
        tracing::info!(base_url = %info.base_url, mode = ?info.mode, "Casebook is ready");
        if let Err(e) = self.resume_all().await {
            tracing::warn!("cannot resume missions: {}", e.message());
        }
    }

    /// Follows again the missions that were live when Casebook stopped.
    pub async fn resume_all(self: &Arc<Self>) -> Result<()> {
        for record in self.store.live().await? {
            tracing::info!(session = %record.session_id, "resuming mission");
            let client = self.client_for(&record).await;
            self.follower.resume(&record, client);
        }
        Ok(())
    }

    /// Asks the service to cancel the mission's active turn. The turn is cancelled
    /// when the stream says it ended cancelled, not when this returns.
    /// Cancels the mission's active turn, guarded to the newest turn it started.
    pub async fn cancel_mission(&self, session_id: &str) -> Result<CancelAck> {
        let record = self.store.require(session_id).await?;
        let turn = self.store.newest_turn(session_id).await?;
        self.client_for(&record)
            .await?
            .cancel(session_id, turn.as_deref())
            .await
    }

    /// The transcript's bytes and the file name to propose.
    pub async fn export_mission(
        &self,
        session_id: &str,
        format: ExportFormat,
    ) -> Result<(String, Vec<u8>)> {
        let (record, bytes) = transcript::export(&self.store, session_id, format).await?;
        Ok((transcript::export_name(&record, format), bytes))
    }

    /// Hands a saved report to the Cite view: it arrives as an opened document does, and
    /// the view shows its preview at once (`take_handed_over`). Only a Word document that
    /// is there can be handed over.
    pub fn hand_over(&self, path: &Path) -> Result<String> {
        let is_docx = (path.extension()).is_some_and(|e| e.eq_ignore_ascii_case("docx"));
        if !path.is_absolute() || !is_docx || !path.is_file() {
            return Err(Error::invalid_input(format!(
                "{} is not a saved Word document.",
                path.display()
            )));
        }
        let path = path.to_string_lossy().into_owned();
        (self.handed_over.lock())
            .unwrap_or_else(|e| e.into_inner())
            .push(path.clone());
        Ok(path)
    }

    /// Of `paths`, those handed over as reports; each is taken once.
    pub fn take_handed_over(&self, paths: &[String]) -> Vec<String> {
        let mut held = (self.handed_over.lock()).unwrap_or_else(|e| e.into_inner());
        let (taken, kept) = held.drain(..).partition(|p| paths.contains(p));
        *held = kept;
        taken
    }

    /// Writes an export where the user chose (the dialog already asked before replacing).
    pub async fn save_export(&self, dest: &Path, bytes: Vec<u8>) -> Result<()> {
        save::check_destination(None, dest, true)?;
        let d = dest.to_owned();
        tokio::task::spawn_blocking(move || save::write_atomic(&d, &bytes, true))
            .await
            .map_err(|e| Error::internal(format!("Saving failed: {e}")))?
    }

    /// Stops the embedded sandbox, if any (the CLI, before it exits).
    pub async fn shutdown(&self) {
        if let Some(b) = self.backend.lock().await.take() {
            b.stop().await;
        }
    }
}

/// The platform data folder (or `CASEBOOK_DATA_DIR`).
pub fn default_data_dir() -> Result<PathBuf> {
    crate::paths::data_dir()
}

/// One sign-in through the service's console: the cookies its window holds are
/// offered as they change (the same ones again only after a while, since a service
/// may turn an existing cookie into a session when the person signs in).
#[derive(Default)]
pub struct ConsoleSignIn {
    tried: Option<(String, std::time::Instant)>,
}

impl ConsoleSignIn {
    const RETRY_SAME: std::time::Duration = std::time::Duration::from_secs(3);

    /// Offers the window's cookies (name, value); true once the account endpoint
    /// accepted them and they are kept as the session.
    pub async fn offer(
        &mut self,
        core: &Casebook,
        cookies: impl IntoIterator<Item = (String, String)>,
    ) -> bool {
        let header = cookies
            .into_iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let fresh = self
            .tried
            .as_ref()
            .is_none_or(|(h, at)| *h != header || at.elapsed() >= Self::RETRY_SAME);
        if header.is_empty() || !fresh {
            return false;
        }
        match core.sign_in_with_cookies(&header).await {
            Ok(_) => true,
            Err(e) => {
                // Not signed in yet (or a passing failure): look again. Never the
                // message, which is about cookies.
                tracing::debug!(code = %e.code(), "the console's cookies are not a session yet");
                self.tried = Some((header, std::time::Instant::now()));
                false
            }
        }
    }
}
