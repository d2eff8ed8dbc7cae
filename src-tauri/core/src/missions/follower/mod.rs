//! Following missions: one watcher per session, however many windows (or
//! terminals) show it.
//!
//! A watcher follows the service's stream from the last stored event, writes every
//! event to the [`MissionStore`] and passes on only what the store says is new, so
//! a subscriber never sees an event twice. Subscribers are [`Sink`]s (the app's
//! window channels, the CLI's stdout) keyed by a label; subscribing again under the
//! same label (a reload, a reopen) replaces the old sink. A subscriber first gets
//! what the store holds, under the same lock the watcher appends under, so the
//! replay and the live events meet without a gap or an overlap. Status changes also
//! go to one [`Observer`] (the app's missions list and notifications).

use crate::error::{Error, ErrorCode, Result};
use crate::missions::client::InvestigationClient;
use crate::missions::conversation::{Conversation, ConversationChanges};
use crate::missions::protocol::MissionEvent;
use crate::missions::protocol::facts::TurnEnd;
use crate::missions::store::conversations::{ConversationPage, Folded, WINDOW_TAIL};
use crate::missions::store::{MissionRecord, MissionStatus, MissionStore, StoredEvent};
use crate::missions::stream::{
    Awaited, Reply, WatchEnd, WatchEndReason, WatchOptions, WatchUpdate,
};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;
use subscribers::Subscribers;
use ts_rs::TS;

mod subscribers;

pub use subscribers::{BACKGROUND_GATHER, Feed};

/// Events per message when replaying from the store: big enough that 50 000 events
/// take a few dozen messages, small enough that each stays quick to parse.
const REPLAY_PAGE: u32 = 2_000;
/// Events written (and sent) in one go when they arrive faster than one by one.
const MAX_BATCH: usize = 1_000;
/// Batches start at most this often. The first event after a quiet spell still goes
/// out at once; in a burst, one write and one message per gap instead of one per event
/// keeps the store, the IPC bridge and the window from falling behind. A window draws
/// once per message, and while it follows a burst each draw repaints the whole
/// timeline (in software, without a GPU): the gap sets what a burst costs the web
/// process. It is also most of what an event waits in a burst, so it is as long as the
/// window's 50 ms event-to-screen goal allows (docs/performance.md, "Tuning figures").
const GATHER: std::time::Duration = std::time::Duration::from_millis(38);

/// What a subscriber hears.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum MissionUpdate {
    /// The mission as stored: always the first message.
    Mission { mission: MissionRecord },
    /// Events in order. `replay` is true for events read from the store (already
    /// seen before this subscriber came), false for events as they arrive.
    Events {
        events: Vec<StoredEvent>,
        replay: bool,
    },
    /// The conversation as it stands when the subscriber came: its newest items.
    Conversation { page: ConversationPage },
    /// What the newest records changed in the conversation (after their `Events`).
    Items { changes: ConversationChanges },
    /// The mission's status changed; `detail` says why for reconnecting, lost and
    /// error, and `code` is the error's code when following failed.
    Status {
        status: MissionStatus,
        detail: Option<String>,
        code: Option<ErrorCode>,
    },
}

/// A subscriber: takes each update, and answers false once it is gone (a closed
/// window), which unsubscribes it.
pub type Sink = Box<dyn Fn(MissionUpdate) -> bool + Send + Sync>;

/// Told of every status change of every followed mission.
pub trait Observer: Send + Sync + 'static {
    fn status_changed(&self, mission: &MissionRecord, status: MissionStatus);
}

/// An observer that ignores everything (the CLI prints from its sink instead).
pub struct Quiet;

impl Observer for Quiet {
    fn status_changed(&self, _: &MissionRecord, _: MissionStatus) {}
}

struct Inner {
    subscribers: Subscribers,
    status: MissionStatus,
    /// Set, under the lock, when the watcher has stopped; a late subscriber then
    /// reads everything from the store instead.
    finished: bool,
    /// Why following failed, once it has.
    error: Option<ErrorCode>,
    /// The conversation, continued as records arrive; read from the store at the first
    /// batch.
    conversation: Option<Conversation>,
}

struct Watcher {
    record: MissionRecord,
    /// The session was created by this client a moment ago (its stream may not open yet).
    just_created: bool,
    /// Asked although stored as waiting for the person ([`Follower::subscribe_asking`]).
    settled: bool,
    /// Replies sent while it follows, each followed to the turn that takes it.
    awaited: Awaited,
    inner: tokio::sync::Mutex<Inner>,
}

/// How a watcher gets its client: the backend may have changed since the mission
/// started, and a mission from another backend cannot be followed.
pub type ClientResult = Result<InvestigationClient>;

/// The running watchers, by session id.
pub struct Follower {
    store: MissionStore,
    observer: Arc<dyn Observer>,
    running: std::sync::Mutex<HashMap<String, Arc<Watcher>>>,
}

impl Follower {
    pub fn new(store: MissionStore, observer: Arc<dyn Observer>) -> Arc<Self> {
        Arc::new(Self {
            store,
            observer,
            running: Default::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Watcher>>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a mission in `status` should be followed.
    pub fn should_follow(status: MissionStatus) -> bool {
        // An error may have been a dropped network that is back: reopening retries.
        status.is_live() || status == MissionStatus::Error
    }

    /// The session's watcher, started with `client` if the mission should be
    /// followed and nobody follows it yet.
    fn ensure(
        self: &Arc<Self>,
        record: &MissionRecord,
        client: Option<ClientResult>,
    ) -> Option<Arc<Watcher>> {
        self.ensure_with(record, client, false, false, None)
    }

    fn ensure_with(
        self: &Arc<Self>,
        record: &MissionRecord,
        client: Option<ClientResult>,
        just_created: bool,
        asking: bool,
        reply: Option<Reply>,
    ) -> Option<Arc<Watcher>> {
        let mut running = self.lock();
        if let Some(w) = running.get(&record.session_id) {
            return Some(w.clone());
        }
        let client = client.filter(|_| asking || Self::should_follow(record.status))?;
        let watcher = Arc::new(Watcher {
            record: record.clone(),
            just_created,
            settled: !Self::should_follow(record.status),
            awaited: Awaited::default(),
            inner: tokio::sync::Mutex::new(Inner {
                subscribers: Subscribers::default(),
                status: record.status,
                finished: false,
                error: None,
                conversation: None,
            }),
        });
        if let Some(reply) = reply {
            watcher.awaited.add(reply);
        }
        running.insert(record.session_id.clone(), watcher.clone());
        tokio::spawn(self.clone().run(watcher.clone(), client));
        Some(watcher)
    }

    /// Starts following `record` (if it should be and is not followed yet) with no
    /// subscriber: live missions resume in the background at start.
    pub fn resume(self: &Arc<Self>, record: &MissionRecord, client: ClientResult) {
        self.ensure(record, Some(client));
    }

    /// [`Self::resume`] for a session this client has just created: its stream may not
    /// open for a moment.
    pub fn resume_created(self: &Arc<Self>, record: &MissionRecord, client: ClientResult) {
        self.ensure_with(record, Some(client), true, false, None);
    }

    /// Follows `reply` to the turn that takes it: the running watcher goes on past its
    /// turn's end until then, or a new one starts (with `client`) from the stored cursor.
    pub async fn await_reply(
        self: &Arc<Self>,
        record: &MissionRecord,
        client: ClientResult,
        reply: Reply,
    ) {
        loop {
            let running = self.lock().get(&record.session_id).cloned();
            match running {
                Some(w) if w.awaited.add(reply.clone()) => return,
                // Ending: once it has, a new one follows.
                Some(_) => self.finished(&record.session_id).await,
                None => {
                    let mut record = record.clone();
                    record.status = MissionStatus::Running;
                    self.ensure_with(&record, Some(client), false, false, Some(reply));
                    return;
                }
            }
        }
    }

    pub fn is_running(&self, session_id: &str) -> bool {
        self.lock().contains_key(session_id)
    }

    fn remove(&self, w: &Arc<Watcher>) {
        let mut running = self.lock();
        if running
            .get(&w.record.session_id)
            .is_some_and(|cur| Arc::ptr_eq(cur, w))
        {
            running.remove(&w.record.session_id);
        }
    }

    /// Says whether the reader looks at the window `label` (focused and shown): one that
    /// is not is sent what arrives once a [`BACKGROUND_GATHER`], and at once what it was
    /// held when looked at again.
    pub async fn set_looked_at(&self, label: &str, looked_at: bool) {
        let all: Vec<_> = self.lock().values().cloned().collect();
        for w in all {
            w.inner
                .lock()
                .await
                .subscribers
                .set_looked_at(label, looked_at);
        }
    }

    /// Forgets every sink subscribed under `label` (a closed window).
    pub fn unsubscribe(&self, label: &str) {
        let all: Vec<_> = self.lock().values().cloned().collect();
        let label = label.to_owned();
        tokio::spawn(async move {
            for w in all {
                w.inner.lock().await.subscribers.remove(&label);
            }
        });
    }

    /// Sends the mission's stored state to `sink` (the record, whose `event_count`
    /// is what is stored, and with `feed.replay` every stored event), then, while a
    /// watcher follows the mission, what each batch of records changes and every status
    /// as it comes (the records too with `feed.records`). Returns once the stored part
    /// is sent. `client` starts a watcher when none runs and the mission should be
    /// followed. A window pages the stored events itself (`replay` off), so it never
    /// holds them all; the CLI prints them (`replay` on).
    pub async fn subscribe(
        self: &Arc<Self>,
        record: &MissionRecord,
        client: Option<ClientResult>,
        label: &str,
        sink: Sink,
        feed: Feed,
    ) -> Result<()> {
        if let Some(w) = self.ensure(record, client) {
            let mut inner = w.inner.lock().await;
            if !inner.finished {
                replay(&self.store, &record.session_id, &sink, feed.replay).await?;
                inner.subscribers.insert(label, sink, feed);
                return Ok(());
            }
        }
        replay(&self.store, &record.session_id, &sink, feed.replay).await
    }

    /// [`Self::subscribe`], asking the server from the stored cursor whatever the mission's
    /// stored status: another client may have replied to a mission stored as waiting, or
    /// answered its question. One stored as settled ends at once when the server has
    /// nothing new, and keeps its status.
    pub async fn subscribe_asking(
        self: &Arc<Self>,
        record: &MissionRecord,
        client: ClientResult,
        label: &str,
        sink: Sink,
        feed: Feed,
    ) -> Result<()> {
        self.ensure_with(record, Some(client), false, true, None);
        self.subscribe(record, None, label, sink, feed).await
    }

    /// Waits until nobody follows the session any more.
    pub async fn finished(&self, session_id: &str) {
        while self.is_running(session_id) {
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
    }

    async fn run(self: Arc<Self>, w: Arc<Watcher>, client: ClientResult) {
        let result = match client {
            Ok(client) => {
                let mut first = true;
                loop {
                    let end = self.follow(&w, client.clone(), first).await;
                    first = false;
                    // A reply sent as this turn ended is in a turn of its own: followed
                    // too, by the same subscribers.
                    let reached_turn_end = match &end {
                        Ok(WatchEnd {
                            reason: WatchEndReason::Terminal(e),
                            ..
                        }) => matches!(
                            crate::missions::protocol::turn_end(e),
                            Some(TurnEnd::Waiting | TurnEnd::NeedsInput)
                        ),
                        _ => false,
                    };
                    if !reached_turn_end || w.awaited.close_if_idle() {
                        w.awaited.close();
                        break end;
                    }
                }
            }
            Err(e) => Err(e),
        };
        let mut inner = w.inner.lock().await;
        match result {
            Ok(end) => {
                // A server that said it has nothing more to stream (204, eve's end of
                // the stream) has finished, whatever its last record was named.
                let finished = end.reason == WatchEndReason::ServerDone;
                if finished && inner.status.is_live() {
                    self.set_status(&w, &mut inner, MissionStatus::Complete, None)
                        .await;
                }
            }
            Err(e) => {
                let session = &w.record.session_id;
                tracing::warn!(%session, code = %e.code, "mission watch ended: {}", e.message);
                let status = if e.is_network() {
                    MissionStatus::Lost
                } else if e.service_code() == Some("session_expired") {
                    // Final: asking again (at each start, or each time a window opens)
                    // would only be told the same.
                    MissionStatus::Expired
                } else if e.service_code() == Some("session_stranded") {
                    // It can never run again: over, as eve's own client ends it.
                    MissionStatus::Failed
                } else {
                    MissionStatus::Error
                };
                inner.error = Some(e.code);
                self.set_status(&w, &mut inner, status, Some(e.message))
                    .await;
            }
        }
        inner.finished = true;
        // Dropping the sinks tells each subscriber the stream has ended.
        inner.subscribers.clear();
        drop(inner);
        self.remove(&w);
        drop(w);
        give_back_free_memory();
    }

    /// Follows one watch; `first`: the watcher's first, which a settled mission may end at
    /// once (a later one follows a reply sent meanwhile).
    async fn follow(
        &self,
        w: &Arc<Watcher>,
        client: InvestigationClient,
        first: bool,
    ) -> Result<WatchEnd> {
        let settled = w.settled && first;
        if !settled {
            let mut inner = w.inner.lock().await;
            if inner.status != MissionStatus::Running {
                self.set_status(w, &mut inner, MissionStatus::Running, None)
                    .await;
            }
        }
        let resume = self.store.resume_point(&w.record.session_id).await?;
        let record = self.store.require(&w.record.session_id).await?;
        let options = WatchOptions {
            last_event_id: record.last_event_id.clone(),
            received_after_last_id: resume.since.into_iter().map(|e| e.event).collect(),
            start_index: resume.start_index,
            just_created: w.just_created && first,
            settled,
            turns: self.store.turns(&w.record.session_id).await?,
            awaited: w.awaited.clone(),
            ..WatchOptions::default()
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let id = record.session_id.clone();
        let watch = tokio::spawn(async move {
            client
                .watch(&id, options, move |update| {
                    let _ = tx.send(update);
                })
                .await
        });
        // Stops the stream if writing to the store fails and this returns early.
        let abort = AbortOnDrop(Some(watch.abort_handle()));
        loop {
            // A quiet stream still brings the windows in the background what they hold.
            let first = match tokio::time::timeout(BACKGROUND_GATHER, rx.recv()).await {
                Ok(Some(u)) => u,
                Ok(None) => break,
                Err(_) => {
                    w.inner.lock().await.subscribers.release_due();
                    continue;
                }
            };
            let taken = tokio::time::Instant::now();
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(u) => batch.push(u),
                    Err(_) => break,
                }
            }
            self.apply(w, batch).await?;
            // Sent: now the search index, while the next batch gathers. A search
            // indexes what is left first, so a failure here loses nothing.
            if let Err(e) = self.store.index_text().await {
                tracing::warn!(session = %w.record.session_id, "cannot index the mission's events yet: {}", e.message);
            }
            tokio::time::sleep_until(taken + GATHER).await;
        }
        drop(abort);
        watch
            .await
            .map_err(|e| Error::internal(format!("The mission watcher stopped: {e}")))?
    }

    /// Writes a batch of updates in order: runs of events in one transaction each.
    async fn apply(&self, w: &Watcher, batch: Vec<WatchUpdate>) -> Result<()> {
        let mut inner = w.inner.lock().await;
        let mut events = Vec::new();
        // The stream's cursor, and how many of `events` its lines cover.
        let mut cursor = None;
        for update in batch {
            match update {
                WatchUpdate::Event { event } => events.push(event),
                WatchUpdate::Position { next } => cursor = Some((next, events.len())),
                WatchUpdate::Connected { stream_version, .. } => {
                    self.flush(w, &mut inner, &mut events, &mut cursor).await?;
                    // Stream versions up to 20 are eve's token generation: a follow-up
                    // carries the newest token, also for a mission this computer did not
                    // create. Later ones address sessions by id and refuse a token.
                    if stream_version.is_some_and(|v| v <= 20)
                        && let Err(e) = self.store.accept_tokens(&w.record.session_id).await
                    {
                        tracing::warn!("cannot record the mission's generation: {}", e.message);
                    }
                    if let Some(v) = stream_version
                        && let Err(e) = self.store.set_stream_version(&w.record.session_id, v).await
                    {
                        tracing::warn!("cannot record the mission's stream version: {}", e.message);
                    }
                    if inner.status == MissionStatus::Reconnecting {
                        self.set_status(w, &mut inner, MissionStatus::Running, None)
                            .await;
                    }
                }
                WatchUpdate::Reconnecting {
                    after_ms, reason, ..
                } => {
                    self.flush(w, &mut inner, &mut events, &mut cursor).await?;
                    let detail = format!(
                        "The stream dropped ({reason}); reconnecting in {:.1} s.",
                        after_ms as f64 / 1000.0
                    );
                    self.set_status(w, &mut inner, MissionStatus::Reconnecting, Some(detail))
                        .await;
                }
            }
        }
        self.flush(w, &mut inner, &mut events, &mut cursor).await
    }

    async fn flush(
        &self,
        w: &Watcher,
        inner: &mut Inner,
        events: &mut Vec<MissionEvent>,
        cursor: &mut Option<(u64, usize)>,
    ) -> Result<()> {
        if events.is_empty() && cursor.is_none() {
            return Ok(());
        }
        // Read before the records are written, so what they change reaches the
        // subscribers (a window subscribed before them holds the conversation without them).
        if inner.conversation.is_none() {
            let mut conversation = self.store.conversation(&w.record.session_id).await?.0;
            conversation.set_budget(w.record.budget_cents);
            inner.conversation = Some(conversation);
        }
        let appended = self
            .store
            .append_at(&w.record.session_id, std::mem::take(events), cursor.take())
            .await?;
        if appended.events.is_empty() {
            return Ok(());
        }
        let (before, after) = (inner.status, appended.status);
        let Some(conversation) = inner.conversation.as_mut() else {
            return Err(Error::internal("The mission's conversation was not read."));
        };
        let folded = Folded::of(conversation, &appended);
        // Sent even when no item changed: a window counts the records (a turn's last,
        // eve's waiting record, changes only that and the spend its budget warning reads).
        inner.subscribers.deliver(&appended.events, &folded.changes);
        // Kept under the lock, so a window that subscribes now reads it whole; kept even
        // when nothing changed, so it is never behind the records it has read.
        if let Err(e) = self
            .store
            .save_conversation(&w.record.session_id, folded)
            .await
        {
            tracing::warn!("cannot keep the mission's conversation: {}", e.message);
        }
        if after != before {
            inner.status = after;
            self.announce(w, inner, after, None);
        }
        Ok(())
    }

    async fn set_status(
        &self,
        w: &Watcher,
        inner: &mut Inner,
        status: MissionStatus,
        detail: Option<String>,
    ) {
        if let Err(e) = self.store.set_status(&w.record.session_id, status).await {
            tracing::warn!("cannot record the mission's status: {}", e.message);
        }
        inner.status = status;
        self.announce(w, inner, status, detail);
    }

    fn announce(
        &self,
        w: &Watcher,
        inner: &mut Inner,
        status: MissionStatus,
        detail: Option<String>,
    ) {
        let code = inner.error;
        inner.subscribers.broadcast(&MissionUpdate::Status {
            status,
            detail,
            code,
        });
        self.observer.status_changed(&w.record, status);
    }
}

/// Once a followed turn ends: what its records, batches and conversation took is freed,
/// but glibc gives back only the top of each arena, and the runtime's worker threads each
/// allocate in their own. Without this, the app's process stayed larger after a long
/// mission than after a short one however long it idled (docs/performance.md).
fn give_back_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages to the system; no live allocation moves.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The mission record, then (with `events`) every stored event a page at a time.
async fn replay(store: &MissionStore, session_id: &str, sink: &Sink, events: bool) -> Result<()> {
    let gone = || Error::new(ErrorCode::Cancelled, "The mission's subscriber has gone.");
    let mission = store.require(session_id).await?;
    if !sink(MissionUpdate::Mission { mission }) {
        return Err(gone());
    }
    if !events {
        // A window reads the conversation, and pages its records only when asked.
        let page = store.conversation_tail(session_id, WINDOW_TAIL).await?;
        if !sink(MissionUpdate::Conversation { page }) {
            return Err(gone());
        }
        return Ok(());
    }
    let mut after = 0;
    loop {
        let events = store.events(session_id, after, REPLAY_PAGE).await?;
        let Some(last) = events.last() else {
            return Ok(());
        };
        after = last.seq;
        let full = events.len() as u32 == REPLAY_PAGE;
        if !sink(MissionUpdate::Events {
            events,
            replay: true,
        }) {
            return Err(gone());
        }
        if !full {
            return Ok(());
        }
    }
}

struct AbortOnDrop(Option<tokio::task::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            h.abort();
        }
    }
}

/// A mission's new status, as the app tells its missions list.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct MissionStatusChanged {
    pub session_id: String,
    pub status: MissionStatus,
}
