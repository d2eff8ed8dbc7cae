//! Missions and their events in SQLite, in the app's data directory, so a mission
//! reopens at once and resumes after a restart.

pub mod across;
pub mod conversations;
mod events;
mod missions;
mod search;
pub mod subagents;

use crate::error::{Error, ErrorCode, Result};
use crate::missions::client::{MissionSpec, Session};
use crate::missions::conversation::cards::{self, Card};
pub use crate::missions::lifecycle::MissionStatus;
use crate::missions::protocol::{self, Fact, MissionEvent, TurnTracker};
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::{Arc, Mutex};
use time::OffsetDateTime;
use time::format_description::BorrowedFormatItem;
use time::macros::format_description;
use ts_rs::TS;

/// Each entry moves the schema one version up; the index + 1 is the version.
/// Never edit an entry that has shipped: add one.
const MIGRATIONS: &[&str] = &[
    // 1: missions and their events.
    "CREATE TABLE missions (
        session_id TEXT PRIMARY KEY,
        continuation_token TEXT,
        objective TEXT NOT NULL,
        mission_type TEXT NOT NULL,
        budget_type TEXT NOT NULL,
        budget_cents INTEGER NOT NULL,
        base_url TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        last_event_id TEXT
    );
    CREATE TABLE events (
        session_id TEXT NOT NULL REFERENCES missions(session_id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        event_id TEXT,
        event TEXT NOT NULL,
        data TEXT NOT NULL,
        received_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE UNIQUE INDEX events_by_id ON events(session_id, event_id) WHERE event_id IS NOT NULL;
    CREATE INDEX missions_by_created ON missions(created_at DESC);",
    // 2: search and filter in SQL, so a window pages through any number of events.
    // The trigram tokenizer matches any substring of three or more characters, case
    // blind, as the timeline's search box always has; contentless, since the text is
    // the events table's own.
    "CREATE VIRTUAL TABLE events_text USING fts5(body, content='', tokenize='trigram');
    INSERT INTO events_text(rowid, body) SELECT rowid, event || ' ' || data FROM events;
    CREATE INDEX events_by_kind ON events(session_id, event, seq);",
    // 3: the search index is brought up to date after events are written, not in the
    // same transaction: a trigram insert (and the index's merges) is most of a write,
    // and a live event waited for it on its way to the window. Events up to `upto`
    // (a rowid of `events`) are in the index; every one so far was indexed as written.
    "CREATE TABLE events_text_upto (upto INTEGER NOT NULL);
    INSERT INTO events_text_upto (upto) SELECT COALESCE(MAX(rowid), 0) FROM events;",
    // 4: where an NDJSON (eve) stream resumes: the stored lines consumed (`?startIndex=`),
    // and the last event stored when it was that, so a line whose events were only partly
    // written before a crash is recognised when it comes again.
    "ALTER TABLE missions ADD COLUMN stream_cursor INTEGER;
    ALTER TABLE missions ADD COLUMN cursor_seq INTEGER;",
    // 5: the conversation the records make (missions::conversation), kept beside them so a
    // long mission opens at once and pages by item: its items, its sources in the order
    // found, and where it stands (`progress`, the records read up to `upto_seq`, the
    // figures). Derived: rebuilt from the events whenever it is behind them.
    "CREATE TABLE conversations (
        session_id TEXT PRIMARY KEY REFERENCES missions(session_id) ON DELETE CASCADE,
        upto_seq INTEGER NOT NULL,
        progress TEXT NOT NULL,
        facts TEXT NOT NULL
    );
    CREATE TABLE conversation_items (
        session_id TEXT NOT NULL REFERENCES missions(session_id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        item TEXT NOT NULL,
        PRIMARY KEY (session_id, idx)
    );
    CREATE TABLE conversation_sources (
        session_id TEXT NOT NULL REFERENCES missions(session_id) ON DELETE CASCADE,
        n INTEGER NOT NULL,
        url TEXT NOT NULL,
        title TEXT,
        item INTEGER NOT NULL,
        found_by TEXT,
        PRIMARY KEY (session_id, n)
    );",
    // 6: the API base a mission was started on (a deployment with several agents serves
    // each under its own), so it is followed, answered and cancelled there after the
    // setting changes. NULL: eve's single root agent, `/eve/v1`, all there was before.
    "ALTER TABLE missions ADD COLUMN api_base TEXT;",
    // 7: a delegated sub-agent's records, read only when it is opened (missions::subagents),
    // by the parent's mission and the call that delegated to it; where its stream was read
    // up to, and whether it has finished (then it is never read again).
    "CREATE TABLE subagents (
        session_id TEXT NOT NULL REFERENCES missions(session_id) ON DELETE CASCADE,
        call_id TEXT NOT NULL,
        child_id TEXT NOT NULL,
        name TEXT NOT NULL,
        stream_cursor INTEGER NOT NULL DEFAULT 0,
        last_event_id TEXT,
        finished INTEGER NOT NULL DEFAULT 0,
        more INTEGER NOT NULL DEFAULT 0,
        read_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, call_id)
    );
    CREATE TABLE subagent_events (
        session_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        event_id TEXT,
        event TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session_id, call_id, seq),
        FOREIGN KEY (session_id, call_id) REFERENCES subagents(session_id, call_id) ON DELETE CASCADE
    );
    CREATE UNIQUE INDEX subagent_events_by_id ON subagent_events(session_id, call_id, event_id)
        WHERE event_id IS NOT NULL;",
    // 8: the eve stream version the mission's stream last named: a follow-up is sent in
    // that release's dialect (`client::Dialect`). NULL: never read, or not eve.
    "ALTER TABLE missions ADD COLUMN stream_version INTEGER;",
    // 9: every mission's conversation searched at once (`across`): the items' text in a
    // trigram index, kept by triggers as items are written. An open item (a reply as it
    // streams) is rewritten with every batch, so it enters the index once it closes;
    // `open` says which, and a search reads the few open ones by LIKE.
    "ALTER TABLE conversation_items ADD COLUMN open INTEGER NOT NULL DEFAULT 0;
    UPDATE conversation_items SET open = CASE WHEN json_extract(item, '$.open') THEN 1 ELSE 0 END;
    CREATE INDEX conversation_items_open ON conversation_items(open) WHERE open = 1;
    CREATE VIRTUAL TABLE items_text USING fts5(
        text, content='conversation_items', content_rowid='rowid', tokenize='trigram'
    );
    INSERT INTO items_text(rowid, text) SELECT rowid, text FROM conversation_items WHERE open = 0;
    CREATE TRIGGER items_text_added AFTER INSERT ON conversation_items WHEN new.open = 0 BEGIN
        INSERT INTO items_text(rowid, text) VALUES (new.rowid, new.text);
    END;
    CREATE TRIGGER items_text_removed AFTER DELETE ON conversation_items WHEN old.open = 0 BEGIN
        INSERT INTO items_text(items_text, rowid, text) VALUES ('delete', old.rowid, old.text);
    END;
    CREATE TRIGGER items_text_changed AFTER UPDATE ON conversation_items BEGIN
        INSERT INTO items_text(items_text, rowid, text)
            SELECT 'delete', old.rowid, old.text WHERE old.open = 0;
        INSERT INTO items_text(rowid, text) SELECT new.rowid, new.text WHERE new.open = 0;
    END;",
];

/// Where a stream resumes after a restart.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumePoint {
    /// NDJSON: the stored lines consumed, for `?startIndex=`. `None` for SSE streams.
    pub start_index: Option<u64>,
    /// The events received after the last point the server can resume from exactly (the
    /// last event id, or the cursor), which a server may send again.
    pub since: Vec<StoredEvent>,
}

/// What an append wrote: the events that were new, with their positions, what each
/// says, and the mission's status after them.
#[derive(Debug, Clone, PartialEq)]
pub struct Appended {
    pub events: Vec<StoredEvent>,
    /// `facts[i]` is what `events[i]` says.
    pub facts: Vec<Vec<Fact>>,
    pub status: MissionStatus,
}

/// One mission in the history.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct MissionRecord {
    pub session_id: String,
    pub objective: String,
    pub mission_type: String,
    pub budget_type: String,
    #[ts(type = "number")]
    pub budget_cents: u64,
    pub base_url: String,
    /// The API base under `base_url` it was started on (`/eve/v1`, `/eve/<agent>/v1`, …).
    pub api_base: String,
    pub status: MissionStatus,
    /// Unix milliseconds.
    #[ts(type = "number")]
    pub created_at: i64,
    #[ts(type = "number")]
    pub updated_at: i64,
    pub last_event_id: Option<String>,
    #[ts(type = "number")]
    pub event_count: u64,
    #[serde(skip)]
    pub continuation_token: Option<String>,
}

impl MissionRecord {
    /// The objective's first line, cut to `max` characters: a title for windows,
    /// notifications and lists.
    pub fn headline(&self, max: usize) -> String {
        self.objective
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .chars()
            .take(max)
            .collect()
    }
}

/// A stored event with its position in the mission, and how it reads (computed
/// here once, so every front end shows the same text).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct StoredEvent {
    #[ts(type = "number")]
    pub seq: u64,
    pub event: MissionEvent,
    #[ts(type = "number")]
    pub received_at: i64,
    pub label: String,
    pub card: Card,
}

impl StoredEvent {
    pub fn new(seq: u64, event: MissionEvent, received_at: i64) -> Self {
        Self {
            seq,
            label: cards::label(&event.event),
            card: cards::card(&event),
            event,
            received_at,
        }
    }
}

pub(crate) fn db_err(e: rusqlite::Error) -> Error {
    Error::new(
        ErrorCode::Io,
        format!("The mission history could not be read or written ({e})."),
    )
}

pub fn not_found(session_id: &str) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!("No mission {session_id} in this computer's history."),
    )
}

/// RFC 3339 in UTC with seconds, e.g. `2026-05-01T09:30:00Z`.
pub fn rfc3339(ms: i64) -> String {
    const FORMAT: &[BorrowedFormatItem<'_>] =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(FORMAT).ok())
        // Past year 9999: no reader of an export needs a calendar date for that.
        .unwrap_or_else(|| format!("{ms} ms since 1970"))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The mission history. Cheap to clone; calls run on a blocking thread.
#[derive(Clone)]
pub struct MissionStore {
    conn: Arc<Mutex<Connection>>,
}

impl MissionStore {
    /// Opens (creating and migrating) the database at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let conn = Connection::open(path).map_err(db_err)?;
        Self::init(conn)
    }

    /// A store that lives in memory (tests).
    pub fn in_memory() -> Result<Self> {
        Self::init(Connection::open_in_memory().map_err(db_err)?)
    }

    fn init(mut conn: Connection) -> Result<Self> {
        // The app and the CLI may write the same database at once: wait for the
        // other's transaction instead of failing with "database is locked".
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(db_err)?;
        // Making a new history's WAL and schema can be refused at once as busy while
        // another process does the same (SQLite does not wait there): try again.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let version = loop {
            match prepare(&mut conn) {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => break other.map_err(db_err)?,
            }
        };
        if version > MIGRATIONS.len() {
            return Err(Error::new(
                ErrorCode::Io,
                format!(
                    "The mission history was written by a newer Casebook (schema {version}); this one knows up to {}.",
                    MIGRATIONS.len()
                ),
            ));
        }
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    pub(crate) async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = conn.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut guard)
        })
        .await
        .map_err(|e| Error::internal(format!("The mission history task failed: {e}")))?
    }

    pub async fn schema_version(&self) -> Result<u32> {
        self.with(|c| {
            c.pragma_query_value(None, "user_version", |r| r.get(0))
                .map_err(db_err)
        })
        .await
    }
}

/// The most events one page returns.
pub const MAX_PAGE: u32 = 2_000;

/// A page of a mission's timeline.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct EventPage {
    /// How many events pass the filter in all.
    #[ts(type = "number")]
    pub total: u64,
    /// The position of the first of `events` among those that pass.
    #[ts(type = "number")]
    pub offset: u64,
    pub events: Vec<StoredEvent>,
}

/// Which of a mission's events a timeline shows: one kind (by its event name) and
/// words anywhere in the event (its name or its data), both optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
#[ts(rename_all = "camelCase")]
pub struct EventFilter {
    pub kind: Option<String>,
    pub search: Option<String>,
}

/// One kind of event in a mission, for the timeline's kind filter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct KindCount {
    pub event: String,
    pub label: String,
    #[ts(type = "number")]
    pub count: u64,
}

pub(crate) fn row_to_event(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredEvent> {
    let data: String = r.get(3)?;
    let mut event = MissionEvent::new(r.get(1)?, r.get(2)?, "null");
    event.data = serde_json::from_str(&data).unwrap_or(serde_json::Value::String(data));
    Ok(StoredEvent::new(
        r.get::<_, i64>(0)? as u64,
        event,
        r.get(4)?,
    ))
}

/// The connection's settings, then the schema brought up to date; the schema version
/// found (above what this Casebook knows: left alone).
fn prepare(conn: &mut Connection) -> rusqlite::Result<usize> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // An open history read first without the write lock: a command that only reads (the
    // CLI's `show`, polled while a `watch` writes) would otherwise queue for it.
    let version: usize = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version >= MIGRATIONS.len() {
        return Ok(version);
    }
    // One transaction taking the write lock first, the version read inside it: a second
    // process opening the same new history at once (the app and the CLI, or a second
    // start) waits here and then finds the schema made, instead of making it again
    // ("table missions already exists").
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let version: usize = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version >= MIGRATIONS.len() {
        return Ok(version);
    }
    for sql in &MIGRATIONS[version..] {
        tx.execute_batch(sql)?;
    }
    tx.pragma_update(None, "user_version", MIGRATIONS.len())?;
    tx.commit()?;
    Ok(MIGRATIONS.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A history written before the search across missions (schema 8): its kept items,
    /// closed and open, are found once a newer Casebook opens it, and it keeps finding
    /// what is written after.
    #[tokio::test]
    async fn a_history_from_before_the_search_across_missions_is_found_once_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("casebook.db");
        {
            let mut c = Connection::open(&path).unwrap();
            let tx = c.transaction().unwrap();
            for sql in &MIGRATIONS[..8] {
                tx.execute_batch(sql).unwrap();
            }
            tx.pragma_update(None, "user_version", 8).unwrap();
            tx.execute_batch(
                r#"INSERT INTO missions (session_id, objective, mission_type, budget_type, budget_cents,
                    base_url, status, created_at, updated_at)
                   VALUES ('ses_old', 'Old heat study', 'research', 'fixed', 2500, 'http://x', 'complete', 1, 1);
                INSERT INTO conversations (session_id, upto_seq, progress, facts) VALUES ('ses_old', 0, '{}', '{}');
                INSERT INTO conversation_items (session_id, idx, kind, text, item) VALUES
                    ('ses_old', 0, 'assistant', 'The monsoon report, closed.', '{"open": false}'),
                    ('ses_old', 1, 'assistant', 'A monsoon reply still streaming', '{"open": true}');"#,
            )
            .unwrap();
            tx.commit().unwrap();
        }
        let store = MissionStore::open(&path).unwrap();
        assert_eq!(
            store.schema_version().await.unwrap() as usize,
            MIGRATIONS.len()
        );
        let found = store.search_missions("monsoon", 10).await.unwrap();
        let at: Vec<_> = found.hits.iter().map(|h| h.place.clone()).collect();
        use crate::missions::conversation::ItemKind;
        use across::HitPlace;
        assert_eq!(
            at,
            [
                HitPlace::Item {
                    index: 0,
                    kind: ItemKind::Assistant
                },
                HitPlace::Item {
                    index: 1,
                    kind: ItemKind::Assistant
                }
            ],
            "the closed one from the index, the open one by LIKE: {found:?}"
        );
        // The open one closes: in the index, once.
        store
            .with(|c| {
                c.execute(
                    "UPDATE conversation_items SET open = 0, text = 'A monsoon reply, done.' WHERE idx = 1",
                    [],
                )
                .map_err(db_err)
            })
            .await
            .unwrap();
        let again = store.search_missions("monsoon", 10).await.unwrap();
        assert_eq!(again.hits.len(), 2, "{again:?}");
        assert!(
            again.hits.iter().any(|h| h.snippet.contains("done")),
            "{again:?}"
        );
    }

    #[test]
    fn a_new_history_opened_by_several_at_once_is_made_once() {
        for _ in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("casebook.db");
            let opened: Vec<Result<MissionStore>> = std::thread::scope(|s| {
                let all: Vec<_> = (0..6)
                    .map(|_| s.spawn(|| MissionStore::open(&path)))
                    .collect();
                all.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for store in opened {
                let store = store.unwrap_or_else(|e| panic!("{}", e.message()));
                let version: usize = store
                    .conn
                    .lock()
                    .unwrap()
                    .pragma_query_value(None, "user_version", |r| r.get(0))
                    .unwrap();
                assert_eq!(version, MIGRATIONS.len());
            }
        }
    }

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_777_627_800_999), "2026-05-01T09:30:00Z");
    }

    fn ev(id: &str, name: &str) -> MissionEvent {
        MissionEvent::new(Some(id.into()), name.into(), "{\"n\":1}")
    }

    async fn store_with_mission() -> (MissionStore, Session) {
        let store = MissionStore::in_memory().unwrap();
        let session = Session {
            session_id: "ses_1".into(),
            continuation_token: Some("ct".into()),
            extra: Default::default(),
        };
        store
            .insert(
                &session,
                &MissionSpec::new("Why?", 500),
                "http://127.0.0.1:1",
            )
            .await
            .unwrap();
        (store, session)
    }

    #[tokio::test]
    async fn events_append_once_in_order_and_move_the_status() {
        let (store, s) = store_with_mission().await;
        let new = store
            .append(
                &s.session_id,
                vec![ev("1", "turn.started"), ev("2", "plan"), ev("2", "plan")],
            )
            .await
            .unwrap();
        assert_eq!(
            new.iter().map(|e| e.seq).collect::<Vec<_>>(),
            vec![1, 2],
            "the repeated id is skipped"
        );
        let again = store
            .append(
                &s.session_id,
                vec![ev("2", "plan"), ev("3", "session.completed")],
            )
            .await
            .unwrap();
        assert_eq!(again.len(), 1);
        let m = store.get(&s.session_id).await.unwrap().unwrap();
        assert_eq!(m.status, MissionStatus::Complete);
        assert_eq!(m.last_event_id.as_deref(), Some("3"));
        assert_eq!(m.event_count, 3);
        let page = store.events(&s.session_id, 1, 10).await.unwrap();
        assert_eq!(
            page.iter()
                .map(|e| e.event.event.as_str())
                .collect::<Vec<_>>(),
            vec!["plan", "session.completed"]
        );
        assert_eq!(page[0].event.data["n"], 1);
    }

    #[tokio::test]
    async fn cancelled_then_waiting_shows_cancelled_and_live_missions_are_found() {
        let (store, s) = store_with_mission().await;
        assert_eq!(
            store.live().await.unwrap().len(),
            1,
            "a new mission is running"
        );
        store
            .append(
                &s.session_id,
                vec![ev("1", "turn.cancelled"), ev("2", "session.waiting")],
            )
            .await
            .unwrap();
        assert_eq!(
            store.get(&s.session_id).await.unwrap().unwrap().status,
            MissionStatus::Cancelled
        );
        assert!(store.live().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn the_schema_is_versioned_and_reopens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("casebook.db");
        {
            let store = MissionStore::open(&path).unwrap();
            assert_eq!(
                store.schema_version().await.unwrap() as usize,
                MIGRATIONS.len()
            );
            let s = Session {
                session_id: "ses_x".into(),
                continuation_token: None,
                extra: Default::default(),
            };
            store
                .insert(&s, &MissionSpec::new("Keep me", 100), "http://127.0.0.1:9")
                .await
                .unwrap();
        }
        let store = MissionStore::open(&path).unwrap();
        let all = store.list().await.unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].objective, "Keep me");

        // A database from a newer Casebook is refused rather than damaged.
        drop(store);
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        drop(conn);
        assert_eq!(
            MissionStore::open(&path).err().map(|e| e.code),
            Some(ErrorCode::Io)
        );
    }

    /// Filter and search run in SQL over every event and page their results.
    #[tokio::test]
    async fn pages_filter_and_search_every_event_in_sql() {
        let (store, _) = store_with_mission().await;
        let events: Vec<MissionEvent> = (1..=500)
            .map(|i| {
                let (name, data) = if i % 5 == 0 {
                    ("search.query", format!(r#"{{"query":"Urban HEAT {i}"}}"#))
                } else {
                    ("plan", format!(r#"{{"steps":["step {i}"]}}"#))
                };
                MissionEvent::new(Some(i.to_string()), name.into(), &data)
            })
            .chain([MissionEvent::new(
                None,
                "draft".into(),
                "Café notes\nline two",
            )])
            .collect();
        store.append("ses_1", events).await.unwrap();
        let all = EventFilter::default();
        assert_eq!(store.count("ses_1", &all).await.unwrap(), 501);
        let page = store.page("ses_1", &all, Some(498), 10).await.unwrap();
        assert_eq!((page.total, page.offset), (501, 498));
        assert_eq!(
            page.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [499, 500, 501]
        );

        let kind = EventFilter {
            kind: Some("search.query".into()),
            search: None,
        };
        assert_eq!(store.count("ses_1", &kind).await.unwrap(), 100);
        let second = store.page("ses_1", &kind, Some(1), 1).await.unwrap();
        assert_eq!(second.events[0].event.id.as_deref(), Some("10"));

        // The end: whole pages of 30 from the one that leaves at least 30 before the
        // end (100 pass: positions 60 to 99), in order.
        let end = store.page("ses_1", &kind, None, 30).await.unwrap();
        assert_eq!((end.total, end.offset, end.events.len()), (100, 60, 40));
        let ids: Vec<_> = end
            .events
            .iter()
            .filter_map(|e| e.event.id.clone())
            .collect();
        let want: Vec<_> = (61..=100).map(|i| (i * 5).to_string()).collect();
        assert_eq!(ids, want);
        // A page that ends exactly at the end, and fewer than a page in all.
        let end = store.page("ses_1", &kind, None, 25).await.unwrap();
        assert_eq!((end.offset, end.events.len()), (75, 25));
        let end = store.page("ses_1", &all, None, 2_000).await.unwrap();
        assert_eq!((end.offset, end.events.len()), (0, 501));

        let search = |s: &str| EventFilter {
            kind: None,
            search: Some(s.into()),
        };
        assert_eq!(
            store.count("ses_1", &search("urban heat")).await.unwrap(),
            100,
            "any case"
        );
        assert_eq!(
            store.count("ses_1", &search("heat 25")).await.unwrap(),
            3,
            "25, 250, 255"
        );
        assert_eq!(
            store.count("ses_1", &search("café")).await.unwrap(),
            1,
            "text data too"
        );
        assert_eq!(
            store.count("ses_1", &search("\"q")).await.unwrap(),
            100,
            "quotes are words"
        );
        assert_eq!(
            store.count("ses_1", &search("99")).await.unwrap(),
            5,
            "short needles scan"
        );
        assert_eq!(
            store
                .count("ses_1", &search("no such words"))
                .await
                .unwrap(),
            0
        );
        let none = store
            .page("ses_1", &search("no such words"), None, 30)
            .await
            .unwrap();
        assert_eq!((none.total, none.offset, none.events.len()), (0, 0, 0));
        let both = EventFilter {
            kind: Some("plan".into()),
            search: Some("step 7".into()),
        };
        assert_eq!(
            store.count("ses_1", &both).await.unwrap(),
            9,
            "7 and 71-79 but 75"
        );

        let kinds = store.kinds("ses_1").await.unwrap();
        let counts: Vec<(&str, u64)> = kinds.iter().map(|k| (k.event.as_str(), k.count)).collect();
        assert_eq!(counts, [("draft", 1), ("plan", 400), ("search.query", 100)]);
        assert_eq!(kinds[2].label, "Search");
    }

    /// A history file as a Casebook at schema `version` left it, holding `rows`.
    fn history_at(version: usize, rows: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("casebook.db");
        let c = Connection::open(&path).unwrap();
        for sql in &MIGRATIONS[..version] {
            c.execute_batch(sql).unwrap();
        }
        c.pragma_update(None, "user_version", version).unwrap();
        c.execute_batch(rows).unwrap();
        (dir, path)
    }

    /// A history written before search moved to SQL is indexed when it is opened.
    #[tokio::test]
    async fn an_older_history_is_indexed_on_open() {
        let (_dir, path) = history_at(
            1,
            "INSERT INTO missions VALUES ('ses_old', NULL, 'o', 'research', 'fixed', 100, 'http://127.0.0.1:1', 'complete', 0, 0, '1');
             INSERT INTO events VALUES ('ses_old', 1, '1', 'evidence', '{\"quote\":\"Shade lowers heat\"}', 0);",
        );
        let store = MissionStore::open(&path).unwrap();
        assert_eq!(
            store.schema_version().await.unwrap() as usize,
            MIGRATIONS.len()
        );
        let f = EventFilter {
            kind: None,
            search: Some("lowers heat".into()),
        };
        assert_eq!(store.count("ses_old", &f).await.unwrap(), 1);
        // Indexed once, by the migration: nothing is left for the next call.
        assert_eq!(store.index_text().await.unwrap(), 0);
    }

    /// A history from schema 2 (each event indexed as it was written) is not indexed
    /// again: a contentless index would count every old event twice.
    #[tokio::test]
    async fn a_history_indexed_as_written_is_not_indexed_again() {
        let (_dir, path) = history_at(
            2,
            "INSERT INTO missions VALUES ('ses_2', NULL, 'o', 'research', 'fixed', 100, 'http://127.0.0.1:1', 'running', 0, 0, '2');
             INSERT INTO events VALUES ('ses_2', 1, '1', 'note', '{\"text\":\"tide tables\"}', 0);
             INSERT INTO events_text(rowid, body) SELECT rowid, event || ' ' || data FROM events;",
        );
        let store = MissionStore::open(&path).unwrap();
        assert_eq!(store.index_text().await.unwrap(), 0);
        store
            .append(
                "ses_2",
                vec![MissionEvent::new(
                    Some("2".into()),
                    "note".into(),
                    "{\"text\":\"tide gauges\"}",
                )],
            )
            .await
            .unwrap();
        assert_eq!(store.index_text().await.unwrap(), 1);
        assert_eq!(store.count("ses_2", &search_for("tide")).await.unwrap(), 2);
        assert_eq!(
            store.count("ses_2", &search_for("tables")).await.unwrap(),
            1
        );
    }

    fn search_for(text: &str) -> EventFilter {
        EventFilter {
            kind: None,
            search: Some(text.into()),
        }
    }

    /// Events are written first and indexed after (the follower sends them between
    /// the two); a search indexes whatever is left, so it finds every event even if
    /// nobody indexed them, and each only once.
    #[tokio::test]
    async fn a_search_finds_events_written_but_not_yet_indexed() {
        let (store, s) = store_with_mission().await;
        let note = |id: &str, text: &str| {
            MissionEvent::new(
                Some(id.into()),
                "note".into(),
                &serde_json::json!({ "text": text }).to_string(),
            )
        };
        store
            .append(
                &s.session_id,
                vec![note("1", "mangrove roots"), note("2", "salt marsh")],
            )
            .await
            .unwrap();
        let page = store
            .page(&s.session_id, &search_for("mangrove"), Some(0), 10)
            .await
            .unwrap();
        assert_eq!(page.total, 1);
        assert_eq!(page.events[0].event.id.as_deref(), Some("1"));
        // The search indexed both; nothing is left, and nothing is indexed twice.
        assert_eq!(store.index_text().await.unwrap(), 0);
        store
            .append(&s.session_id, vec![note("3", "mangrove seedlings")])
            .await
            .unwrap();
        assert_eq!(store.index_text().await.unwrap(), 1);
        assert_eq!(store.index_text().await.unwrap(), 0);
        assert_eq!(
            store
                .count(&s.session_id, &search_for("mangrove"))
                .await
                .unwrap(),
            2
        );
        assert_eq!(
            store
                .count(&s.session_id, &search_for("marsh"))
                .await
                .unwrap(),
            1
        );
        // Short needles scan the events themselves, index or not.
        assert_eq!(
            store.count(&s.session_id, &search_for("ro")).await.unwrap(),
            2
        );
    }

    /// The app and the CLI may share one history: what one writes, the other's search
    /// finds, and neither indexes an event the other already has.
    #[tokio::test]
    async fn two_writers_share_one_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("casebook.db");
        let (a, b) = (
            MissionStore::open(&path).unwrap(),
            MissionStore::open(&path).unwrap(),
        );
        let session = Session {
            session_id: "ses_two".into(),
            continuation_token: None,
            extra: Default::default(),
        };
        a.insert(
            &session,
            &MissionSpec::new("Shared", 100),
            "http://127.0.0.1:9",
        )
        .await
        .unwrap();
        for i in 0..10 {
            let writer = if i % 2 == 0 { &a } else { &b };
            let data = serde_json::json!({ "text": format!("estuary sample {i}") }).to_string();
            writer
                .append(
                    "ses_two",
                    vec![MissionEvent::new(Some(i.to_string()), "note".into(), &data)],
                )
                .await
                .unwrap();
            if i % 3 == 0 {
                writer.index_text().await.unwrap();
            }
        }
        assert_eq!(
            b.count("ses_two", &search_for("estuary")).await.unwrap(),
            10
        );
        assert_eq!(
            a.count("ses_two", &search_for("estuary")).await.unwrap(),
            10
        );
        assert_eq!(
            a.index_text().await.unwrap() + b.index_text().await.unwrap(),
            0
        );
        assert_eq!(
            a.count("ses_two", &search_for("sample 7")).await.unwrap(),
            1
        );
    }
}
