//! Following missions: one watcher per session, however many windows show it.
//!
//! A watcher follows the service's stream from the last stored event, writes every
//! event to the [`MissionStore`] and passes on only what the store says is new, so a
//! window never sees an event twice. Windows subscribe with a channel; a window that
//! subscribes again (a reload, a reopen) replaces its old channel. A subscriber first
//! gets what the store holds, under the same lock the watcher appends under, so the
//! replay and the live events meet without a gap or an overlap.

use crate::notify;
use crate::state::{AppState, BackendMode};
use casebook_core::missions::InvestigationClient;
use casebook_core::store::{MissionRecord, MissionStatus, MissionStore, StoredEvent};
use casebook_core::stream::{WatchOptions, WatchUpdate};
use casebook_core::{Error, ErrorCode};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;
use tauri::ipc::Channel;
use tauri::{AppHandle, Emitter, Manager, Runtime, WebviewUrl, WebviewWindowBuilder};
use ts_rs::TS;

/// Events per channel message when replaying from the store: big enough that 50 000
/// events take a few dozen messages, small enough that each stays quick to parse.
const REPLAY_PAGE: u32 = 2_000;
/// Events the watcher writes (and sends) in one go when they arrive faster than it
/// can write them one by one.
const MAX_BATCH: usize = 1_000;
/// After a write, the watcher lets events gather this long before the next one. The
/// first event after a quiet spell still goes out at once; in a burst, one write and
/// one channel message per gap instead of one per event keeps the store, the IPC
/// bridge and the window's renders from falling behind.
const GATHER: std::time::Duration = std::time::Duration::from_millis(10);

/// What a mission window hears on its channel.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum MissionUpdate {
    /// The mission as stored: always the first message.
    Mission { mission: MissionRecord },
    /// Events in order. `replay` is true for events read from the store (already
    /// seen before this window subscribed), false for events as they arrive.
    Events {
        events: Vec<StoredEvent>,
        replay: bool,
    },
    /// The mission's status changed; `detail` says why for reconnecting and error.
    Status {
        status: MissionStatus,
        detail: Option<String>,
    },
}

/// Told to the main window, so its missions list follows without polling.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct MissionStatusChanged {
    pub session_id: String,
    pub status: MissionStatus,
}

/// The event name of [`MissionStatusChanged`].
pub const STATUS_EVENT: &str = "mission-status";

struct Inner {
    /// Channels by window label.
    subscribers: HashMap<String, Channel<MissionUpdate>>,
    status: MissionStatus,
    /// Set, under the lock, when the watcher has stopped; a late subscriber then
    /// reads everything from the store instead.
    finished: bool,
}

pub struct Watcher {
    session_id: String,
    inner: tokio::sync::Mutex<Inner>,
}

impl Watcher {
    fn broadcast(inner: &mut Inner, update: MissionUpdate) {
        inner
            .subscribers
            .retain(|label, channel| match channel.send(update.clone()) {
                Ok(()) => true,
                Err(e) => {
                    tracing::debug!("mission window {label} is gone: {e}");
                    false
                }
            });
    }
}

/// The running watchers, by session id.
#[derive(Default)]
pub struct Watchers {
    running: std::sync::Mutex<HashMap<String, Arc<Watcher>>>,
}

impl Watchers {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Watcher>>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session's watcher, started if the mission should be followed and nobody
    /// follows it yet. `None` when there is nothing to follow (waiting, complete,
    /// cancelled).
    pub fn ensure<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        record: &MissionRecord,
    ) -> Option<Arc<Watcher>> {
        let mut running = self.lock();
        if let Some(w) = running.get(&record.session_id) {
            return Some(w.clone());
        }
        // An error may have been a dropped network that is back: reopening retries.
        if !(record.status.is_live() || record.status == MissionStatus::Error) {
            return None;
        }
        let watcher = Arc::new(Watcher {
            session_id: record.session_id.clone(),
            inner: tokio::sync::Mutex::new(Inner {
                subscribers: HashMap::new(),
                status: record.status,
                finished: false,
            }),
        });
        running.insert(record.session_id.clone(), watcher.clone());
        tauri::async_runtime::spawn(run(app.clone(), watcher.clone(), record.clone()));
        Some(watcher)
    }

    pub fn is_running(&self, session_id: &str) -> bool {
        self.lock().contains_key(session_id)
    }

    fn remove(&self, w: &Arc<Watcher>) {
        let mut running = self.lock();
        if running
            .get(&w.session_id)
            .is_some_and(|cur| Arc::ptr_eq(cur, w))
        {
            running.remove(&w.session_id);
        }
    }

    /// Forgets a closed window's channels.
    pub fn unsubscribe(&self, label: &str) {
        let all: Vec<_> = self.lock().values().cloned().collect();
        let label = label.to_owned();
        tauri::async_runtime::spawn(async move {
            for w in all {
                w.inner.lock().await.subscribers.remove(&label);
            }
        });
    }

    /// Sends the mission's stored state to `channel`, then, while a watcher follows
    /// the mission, every new event and status as it comes.
    pub async fn subscribe<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        store: &MissionStore,
        session_id: &str,
        label: &str,
        channel: Channel<MissionUpdate>,
    ) -> Result<(), Error> {
        let record = get_record(store, session_id).await?;
        if let Some(w) = self.ensure(app, &record) {
            let mut inner = w.inner.lock().await;
            if !inner.finished {
                replay(store, session_id, &channel).await?;
                inner.subscribers.insert(label.to_owned(), channel);
                return Ok(());
            }
        }
        replay(store, session_id, &channel).await
    }
}

async fn get_record(store: &MissionStore, session_id: &str) -> Result<MissionRecord, Error> {
    store.get(session_id).await?.ok_or_else(|| {
        Error::new(
            ErrorCode::NotFound,
            format!("No mission {session_id} in this computer's history."),
        )
    })
}

fn send(channel: &Channel<MissionUpdate>, update: MissionUpdate) -> Result<(), Error> {
    channel.send(update).map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("Cannot reach the mission window: {e}"),
        )
    })
}

/// The mission record, then every stored event a page at a time.
async fn replay(
    store: &MissionStore,
    session_id: &str,
    channel: &Channel<MissionUpdate>,
) -> Result<(), Error> {
    let mission = get_record(store, session_id).await?;
    send(channel, MissionUpdate::Mission { mission })?;
    let mut after = 0;
    loop {
        let events = store.events(session_id, after, REPLAY_PAGE).await?;
        let Some(last) = events.last() else {
            return Ok(());
        };
        after = last.seq;
        let full = events.len() as u32 == REPLAY_PAGE;
        send(
            channel,
            MissionUpdate::Events {
                events,
                replay: true,
            },
        )?;
        if !full {
            return Ok(());
        }
    }
}

fn is_loopback(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| {
        matches!(
            u.host(),
            Some(url::Host::Ipv4(ip)) if ip.is_loopback()
        ) || matches!(u.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback())
            || u.host_str() == Some("localhost")
    })
}

/// The client for the service the mission was started on. The sandbox gets a new
/// port each time the app starts, so a sandbox mission belongs to whichever sandbox
/// runs now (it keeps its sessions in the data directory).
pub async fn client_for(
    state: &AppState,
    record: &MissionRecord,
) -> Result<InvestigationClient, Error> {
    let info = state.info().await;
    let same = record.base_url == info.base_url
        || (info.mode == BackendMode::Sandbox && is_loopback(&record.base_url));
    if !same {
        return Err(Error::new(
            ErrorCode::Conflict,
            format!(
                "This mission was started on {}, and Casebook now talks to {}. Switch back in Settings to follow it.",
                record.base_url, info.base_url
            ),
        ));
    }
    state.investigations().await
}

async fn run<R: Runtime>(app: AppHandle<R>, w: Arc<Watcher>, record: MissionRecord) {
    let state = app.state::<AppState>();
    let result = follow(&app, &state, &w, &record).await;
    let mut inner = w.inner.lock().await;
    if let Err(e) = result {
        tracing::warn!(session = %record.session_id, code = %e.code, "mission watch ended: {}", e.message);
        set_status(
            &app,
            &state.missions,
            &w.session_id,
            &mut inner,
            MissionStatus::Error,
            Some(e.message),
        )
        .await;
    }
    inner.finished = true;
    // Dropping the channels tells each window the stream has ended.
    inner.subscribers.clear();
    drop(inner);
    app.state::<Watchers>().remove(&w);
}

async fn follow<R: Runtime>(
    app: &AppHandle<R>,
    state: &AppState,
    w: &Arc<Watcher>,
    record: &MissionRecord,
) -> Result<(), Error> {
    let client = client_for(state, record).await?;
    {
        let mut inner = w.inner.lock().await;
        if inner.status != MissionStatus::Running {
            set_status(
                app,
                &state.missions,
                &w.session_id,
                &mut inner,
                MissionStatus::Running,
                None,
            )
            .await;
        }
    }
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let options = WatchOptions {
        last_event_id: record.last_event_id.clone(),
        ..WatchOptions::default()
    };
    let id = record.session_id.clone();
    let watch = tauri::async_runtime::spawn(async move {
        client
            .watch(&id, options, move |update| {
                let _ = tx.send(update);
            })
            .await
    });
    // Stops the stream if writing to the store fails and this returns early.
    let abort = AbortOnDrop(Some(watch.inner().abort_handle()));
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(u) => batch.push(u),
                Err(_) => break,
            }
        }
        apply(app, &state.missions, w, batch).await?;
        tokio::time::sleep(GATHER).await;
    }
    drop(abort);
    match watch.await {
        Ok(end) => end.map(|_| ()),
        Err(e) => Err(Error::new(
            ErrorCode::Io,
            format!("The mission watcher stopped: {e}"),
        )),
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

/// Writes a batch of updates in order: runs of events in one transaction each.
async fn apply<R: Runtime>(
    app: &AppHandle<R>,
    store: &MissionStore,
    w: &Watcher,
    batch: Vec<WatchUpdate>,
) -> Result<(), Error> {
    let mut inner = w.inner.lock().await;
    let mut events = Vec::new();
    for update in batch {
        match update {
            WatchUpdate::Event { event } => events.push(event),
            WatchUpdate::Connected { .. } => {
                flush(app, store, w, &mut inner, &mut events).await?;
                if inner.status == MissionStatus::Reconnecting {
                    set_status(
                        app,
                        store,
                        &w.session_id,
                        &mut inner,
                        MissionStatus::Running,
                        None,
                    )
                    .await;
                }
            }
            WatchUpdate::Reconnecting {
                after_ms, reason, ..
            } => {
                flush(app, store, w, &mut inner, &mut events).await?;
                let detail = format!(
                    "The stream dropped ({reason}); reconnecting in {:.1} s.",
                    after_ms as f64 / 1000.0
                );
                set_status(
                    app,
                    store,
                    &w.session_id,
                    &mut inner,
                    MissionStatus::Reconnecting,
                    Some(detail),
                )
                .await;
            }
        }
    }
    flush(app, store, w, &mut inner, &mut events).await
}

async fn flush<R: Runtime>(
    app: &AppHandle<R>,
    store: &MissionStore,
    w: &Watcher,
    inner: &mut Inner,
    events: &mut Vec<casebook_core::missions::MissionEvent>,
) -> Result<(), Error> {
    if events.is_empty() {
        return Ok(());
    }
    let fresh = store.append(&w.session_id, std::mem::take(events)).await?;
    if fresh.is_empty() {
        return Ok(());
    }
    // The store moves the status with the same rule, so this matches what it saved.
    let before = inner.status;
    let after = fresh.iter().fold(before, |s, e| s.after(&e.event));
    Watcher::broadcast(
        inner,
        MissionUpdate::Events {
            events: fresh,
            replay: false,
        },
    );
    if after != before {
        inner.status = after;
        status_changed(app, &w.session_id, inner, after, None);
    }
    Ok(())
}

async fn set_status<R: Runtime>(
    app: &AppHandle<R>,
    store: &MissionStore,
    session_id: &str,
    inner: &mut Inner,
    status: MissionStatus,
    detail: Option<String>,
) {
    if let Err(e) = store.set_status(session_id, status).await {
        tracing::warn!("cannot record the mission's status: {}", e.message);
    }
    inner.status = status;
    status_changed(app, session_id, inner, status, detail);
}

fn status_changed<R: Runtime>(
    app: &AppHandle<R>,
    session_id: &str,
    inner: &mut Inner,
    status: MissionStatus,
    detail: Option<String>,
) {
    Watcher::broadcast(inner, MissionUpdate::Status { status, detail });
    let _ = app.emit_to(
        "main",
        STATUS_EVENT,
        MissionStatusChanged {
            session_id: session_id.to_owned(),
            status,
        },
    );
    let what = match status {
        MissionStatus::Waiting => "is waiting for you",
        MissionStatus::Complete => "is complete",
        _ => return,
    };
    let focused = app
        .get_webview_window(&window_label(session_id))
        .and_then(|w| w.is_focused().ok())
        .unwrap_or(false);
    tracing::debug!(session = %session_id, status = status.as_str(), focused, "mission needs attention");
    if !focused {
        let app = app.clone();
        let id = session_id.to_owned();
        let what = what.to_owned();
        tauri::async_runtime::spawn(async move {
            let objective = match app.state::<AppState>().missions.get(&id).await {
                Ok(Some(m)) => m.objective,
                _ => id.clone(),
            };
            let headline = objective.lines().next().unwrap_or("").trim().to_owned();
            notify::notify(format!("Mission {what}"), headline);
        });
    }
}

/// The window label for a session: labels allow fewer characters than session ids.
pub fn window_label(session_id: &str) -> String {
    let safe: String = session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("mission-{safe}")
}

/// Only the app's own pages load in a mission window; a link that would navigate
/// it goes to the system browser instead.
fn allow_navigation(url: &url::Url) -> bool {
    let own = match url.scheme() {
        "tauri" => true,
        "http" | "https" => url.host_str() == Some("tauri.localhost"),
        _ => false,
    };
    if !own && matches!(url.scheme(), "http" | "https") {
        let _ = crate::commands::missions::open_external(url.as_str());
    }
    own
}

/// Brings the mission's window forward, opening it if it is not open.
pub fn open_window<R: Runtime>(app: &AppHandle<R>, record: &MissionRecord) -> Result<(), Error> {
    let label = window_label(&record.session_id);
    if let Some(w) = app.get_webview_window(&label) {
        let _ = w.unminimize();
        let _ = w.show();
        let _ = w.set_focus();
        return Ok(());
    }
    let headline: String = record
        .objective
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(60)
        .collect();
    // Percent-encoded so the UI's decodeURIComponent gets the id back exactly.
    let hash: String = record
        .session_id
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    WebviewWindowBuilder::new(
        app,
        label,
        WebviewUrl::App(format!("index.html#/mission/{hash}").into()),
    )
    .title(format!("{headline} · Casebook mission"))
    .inner_size(920.0, 780.0)
    .min_inner_size(560.0, 420.0)
    .disable_drag_drop_handler()
    .on_navigation(allow_navigation)
    .build()
    .map(|_| ())
    .map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("Cannot open the mission window: {e}"),
        )
    })
}

/// Follows again the missions that were live when the app stopped. Their windows
/// stay closed until asked for; opening one shows what happened meanwhile.
pub fn resume_all<R: Runtime>(app: &AppHandle<R>) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let live = match app.state::<AppState>().missions.live().await {
            Ok(live) => live,
            Err(e) => {
                tracing::warn!("cannot read the missions to resume: {}", e.message);
                return;
            }
        };
        for record in live {
            tracing::info!(session = %record.session_id, "resuming mission");
            app.state::<Watchers>().ensure(&app, &record);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::mock_app;
    use casebook_core::missions::MissionSpec;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};
    use tauri::ipc::InvokeResponseBody;
    use tauri::test::MockRuntime;

    /// A mission whose events come `pace_ms` apart, recorded as the app records one.
    async fn start(app: &tauri::App<MockRuntime>, pace_ms: u64, events: u64) -> MissionRecord {
        let state = app.state::<AppState>();
        let spec = MissionSpec::new("Does urban heat raise hospital admissions?", 2500);
        let extra = serde_json::json!({"paceMs": pace_ms, "events": events});
        let client = state.investigations().await.unwrap();
        let session = client
            .create_session_with(&spec, extra.as_object().unwrap().clone())
            .await
            .unwrap();
        state
            .missions
            .insert(&session, &spec, &state.base_url().await)
            .await
            .unwrap()
    }

    /// A channel that keeps every message as JSON.
    fn recorder() -> (Channel<MissionUpdate>, Arc<Mutex<Vec<serde_json::Value>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let keep = seen.clone();
        let channel = Channel::new(move |body| {
            if let InvokeResponseBody::Json(json) = body {
                keep.lock()
                    .unwrap()
                    .push(serde_json::from_str(&json).unwrap());
            }
            Ok(())
        });
        (channel, seen)
    }

    fn event_ids(messages: &[serde_json::Value]) -> Vec<String> {
        messages
            .iter()
            .filter(|m| m["type"] == "events")
            .flat_map(|m| m["events"].as_array().unwrap().clone())
            .map(|e| e["event"]["id"].as_str().unwrap().to_owned())
            .collect()
    }

    fn statuses(messages: &[serde_json::Value]) -> Vec<String> {
        messages
            .iter()
            .filter(|m| m["type"] == "status")
            .map(|m| m["status"].as_str().unwrap().to_owned())
            .collect()
    }

    async fn until(what: &str, f: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !f() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn one_watcher_feeds_every_window_each_event_once() {
        let (app, _dir) = mock_app().await;
        let record = start(&app, 20, 60).await;
        let id = record.session_id.clone();
        let watchers = app.state::<Watchers>();
        let store = app.state::<AppState>().missions.clone();

        let (first, seen1) = recorder();
        watchers
            .subscribe(app.handle(), &store, &id, "mission-a", first)
            .await
            .unwrap();
        assert!(watchers.is_running(&id));
        until("a few events", || {
            event_ids(&seen1.lock().unwrap()).len() >= 10
        })
        .await;

        // A second window joins mid-way, and the first reloads (its channel is replaced).
        let (second, seen2) = recorder();
        watchers
            .subscribe(app.handle(), &store, &id, "mission-b", second)
            .await
            .unwrap();
        let (reloaded, seen1b) = recorder();
        watchers
            .subscribe(app.handle(), &store, &id, "mission-a", reloaded)
            .await
            .unwrap();
        until("the end of the mission", || !watchers.is_running(&id)).await;

        let stored: Vec<String> = store
            .events(&id, 0, u32::MAX)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.event.id.unwrap())
            .collect();
        assert!(stored.len() >= 50, "{} events stored", stored.len());
        let mut unique = stored.clone();
        unique.dedup();
        assert_eq!(unique, stored, "the store holds each event once");
        for (name, seen) in [("second", &seen2), ("reloaded", &seen1b)] {
            let seen = seen.lock().unwrap().clone();
            assert_eq!(seen[0]["type"], "mission", "{name}: the record comes first");
            assert_eq!(
                event_ids(&seen),
                stored,
                "{name}: replay then live, in order, without a gap or a repeat"
            );
            assert_eq!(statuses(&seen).last().map(String::as_str), Some("complete"));
        }
        let old = event_ids(&seen1.lock().unwrap());
        assert_eq!(
            old,
            stored[..old.len()],
            "the replaced channel stopped cleanly"
        );
        let m = store.get(&id).await.unwrap().unwrap();
        assert_eq!(m.status, MissionStatus::Complete);
        assert_eq!(m.last_event_id.as_ref(), stored.last());

        // A finished mission replays from the store without starting a watcher.
        let (late, seen3) = recorder();
        watchers
            .subscribe(app.handle(), &store, &id, "mission-c", late)
            .await
            .unwrap();
        assert!(!watchers.is_running(&id));
        assert_eq!(event_ids(&seen3.lock().unwrap()), stored);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_cut_stream_reconnects_without_repeating_an_event() {
        let (app, _dir) = mock_app().await;
        let state = app.state::<AppState>();
        let base = state.base_url().await;
        let faults = reqwest::Client::new()
            .post(format!("{base}/_sandbox/faults"))
            .bearer_auth(casebook_sandbox::DEMO_KEY)
            .json(&serde_json::json!({"dropStreamAfter": 7}))
            .send()
            .await
            .unwrap();
        assert!(faults.status().is_success());
        let record = start(&app, 0, 30).await;
        let id = record.session_id.clone();
        let watchers = app.state::<Watchers>();
        let (channel, seen) = recorder();
        watchers
            .subscribe(app.handle(), &state.missions, &id, "mission-a", channel)
            .await
            .unwrap();
        until("the end of the mission", || !watchers.is_running(&id)).await;
        let seen = seen.lock().unwrap().clone();
        let ids = event_ids(&seen);
        let mut unique = ids.clone();
        unique.sort_by_key(|i| i.parse::<u64>().unwrap());
        unique.dedup();
        assert_eq!(ids.len(), unique.len(), "no event twice: {ids:?}");
        assert_eq!(ids, unique, "in order");
        let st = statuses(&seen);
        assert!(st.iter().any(|s| s == "reconnecting"), "{st:?}");
        assert_eq!(st.last().map(String::as_str), Some("complete"), "{st:?}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn cancel_ends_in_cancelled_and_unknown_missions_are_not_found() {
        let (app, _dir) = mock_app().await;
        let state = app.state::<AppState>();
        let record = start(&app, 50, 200).await;
        let id = record.session_id.clone();
        let watchers = app.state::<Watchers>();
        let (channel, seen) = recorder();
        watchers
            .subscribe(app.handle(), &state.missions, &id, "mission-a", channel)
            .await
            .unwrap();
        until("a few events", || {
            event_ids(&seen.lock().unwrap()).len() >= 3
        })
        .await;
        let client = client_for(&state, &record).await.unwrap();
        assert_eq!(client.cancel(&id).await.unwrap().status, "accepted");
        until("the end of the mission", || !watchers.is_running(&id)).await;
        let seen = seen.lock().unwrap().clone();
        let names: Vec<String> = seen
            .iter()
            .filter(|m| m["type"] == "events")
            .flat_map(|m| m["events"].as_array().unwrap().clone())
            .map(|e| e["event"]["event"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            names[names.len() - 2..],
            ["turn.cancelled".to_owned(), "session.waiting".to_owned()]
        );
        assert_eq!(
            statuses(&seen).last().map(String::as_str),
            Some("cancelled")
        );

        let (channel, _) = recorder();
        let err = watchers
            .subscribe(
                app.handle(),
                &state.missions,
                "ses_nope",
                "mission-x",
                channel,
            )
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound);
    }

    #[test]
    fn labels_and_loopback() {
        assert_eq!(window_label("ses_0a1b"), "mission-ses_0a1b");
        assert_eq!(window_label("a.b/c"), "mission-a_b_c");
        assert!(is_loopback("http://127.0.0.1:4321"));
        assert!(is_loopback("http://localhost:1"));
        assert!(is_loopback("http://[::1]:1"));
        assert!(!is_loopback("https://api.example.com"));
    }

    #[test]
    fn only_the_app_navigates_in_a_mission_window() {
        let ok = |s: &str| allow_navigation(&url::Url::parse(s).unwrap());
        assert!(ok("tauri://localhost/index.html#/mission/ses_1"));
        assert!(ok("http://tauri.localhost/index.html"));
        assert!(!ok("file:///etc/passwd"));
        assert!(!ok("javascript:alert(1)"));
    }
}
