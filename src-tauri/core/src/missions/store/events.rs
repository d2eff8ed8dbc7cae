//! The `events` table: every record of a mission once, in the service's order, with the
//! status it leaves; where a stream resumes; and pages, counts and filters read in SQL.

use super::search::index_text;
use super::*;

/// What the mission's records before `seq` leave open (questions, a held turn), for a
/// record whose meaning depends on them ([`TurnTracker`]). A turn's start forgets what
/// came before it, so only the records from the newest start are read: a long mission
/// does not read its whole history at each turn's end.
fn turns_before(c: &Connection, session_id: &str, seq: u64) -> Result<TurnTracker> {
    let mut from: i64 = 0;
    for name in protocol::TURN_START_NAMES {
        let at: i64 = c
            .prepare_cached(
                "SELECT COALESCE(MAX(seq), 0) FROM events
                 WHERE session_id = ?1 AND event = ?2 AND seq < ?3",
            )
            .and_then(|mut st| st.query_row(params![session_id, name, seq as i64], |r| r.get(0)))
            .map_err(db_err)?;
        from = from.max(at);
    }
    let mut stmt = c
        .prepare_cached(
            "SELECT event, data FROM events
             WHERE session_id = ?1 AND seq >= ?2 AND seq < ?3 ORDER BY seq",
        )
        .map_err(db_err)?;
    let mut rows = stmt
        .query(params![session_id, from, seq as i64])
        .map_err(db_err)?;
    let mut turns = TurnTracker::default();
    while let Some(row) = rows.next().map_err(db_err)? {
        let name: String = row.get(0).map_err(db_err)?;
        let data: String = row.get(1).map_err(db_err)?;
        turns.observe_all(&protocol::read(&MissionEvent::new(None, name, &data)));
    }
    Ok(turns)
}

fn count_in(c: &Connection, session_id: &str, filter: &EventFilter) -> Result<u64> {
    let (clause, args) = filter.sql(session_id);
    c.prepare_cached(&format!("SELECT COUNT(*) FROM events e WHERE {clause}"))
        .and_then(|mut stmt| {
            stmt.query_row(rusqlite::params_from_iter(args), |r| r.get::<_, i64>(0))
        })
        .map(|n| n as u64)
        .map_err(db_err)
}

impl EventFilter {
    /// Whether the search is long enough to go through the trigram index.
    fn searches_text(&self) -> bool {
        self.search.as_deref().unwrap_or("").trim().chars().count() >= 3
    }

    /// The WHERE clause over `events e` and its arguments.
    fn sql(&self, session_id: &str) -> (String, Vec<rusqlite::types::Value>) {
        let mut clause = String::from("e.session_id = ?");
        let mut args: Vec<rusqlite::types::Value> = vec![session_id.to_owned().into()];
        if let Some(kind) = self.kind.as_deref().filter(|k| !k.is_empty()) {
            clause.push_str(" AND e.event = ?");
            args.push(kind.to_owned().into());
        }
        let needle = self.search.as_deref().unwrap_or("").trim();
        if self.searches_text() {
            // One phrase: the trigram index finds it as a substring; quotes doubled.
            clause.push_str(
                " AND e.rowid IN (SELECT rowid FROM events_text WHERE events_text MATCH ?)",
            );
            args.push(format!("\"{}\"", needle.replace('"', "\"\"")).into());
        } else if !needle.is_empty() {
            // Too short for trigrams: a scan, over one mission only.
            clause.push_str(" AND instr(lower(e.event || ' ' || e.data), lower(?)) > 0");
            args.push(needle.to_owned().into());
        }
        (clause, args)
    }
}

impl MissionStore {
    /// What the mission's stored records leave open (questions, a held turn), for a
    /// watch that resumes after them.
    pub async fn turns(&self, session_id: &str) -> Result<TurnTracker> {
        let id = session_id.to_owned();
        self.with(move |c| turns_before(c, &id, i64::MAX as u64))
            .await
    }

    /// Where following this mission resumes: from the stream's cursor when it has one,
    /// else from the last event id.
    pub async fn resume_point(&self, session_id: &str) -> Result<ResumePoint> {
        let id = session_id.to_owned();
        let cursor: Option<(u64, u64)> = self
            .with(move |c| {
                c.query_row(
                    "SELECT stream_cursor, cursor_seq FROM missions WHERE session_id = ?1",
                    [&id],
                    |r| Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?)),
                )
                .optional()
                .map(|row| match row {
                    Some((Some(p), Some(s))) => Some((p as u64, s as u64)),
                    _ => None,
                })
                .map_err(db_err)
            })
            .await?;
        Ok(match cursor {
            Some((position, seq)) => ResumePoint {
                start_index: Some(position),
                since: self.events(session_id, seq, u32::MAX).await?,
            },
            None => ResumePoint {
                start_index: None,
                since: self.events_since_last_id(session_id).await?,
            },
        })
    }

    /// The id of the newest turn the mission started (to guard a cancel to it).
    pub async fn newest_turn(&self, session_id: &str) -> Result<Option<String>> {
        let id = session_id.to_owned();
        let data: Option<String> = self
            .with(move |c| {
                c.query_row(
                    "SELECT data FROM events WHERE session_id = ?1 AND event = 'turn.started'
                     ORDER BY seq DESC LIMIT 1",
                    [&id],
                    |r| r.get(0),
                )
                .optional()
                .map_err(db_err)
            })
            .await?;
        Ok(data
            .and_then(|d| serde_json::from_str::<serde_json::Value>(&d).ok())
            .and_then(|v| {
                v.get("turnId")
                    .or_else(|| v.pointer("/scope/turnId"))
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned)
            }))
    }

    pub async fn events_since_last_id(&self, session_id: &str) -> Result<Vec<StoredEvent>> {
        let id = session_id.to_owned();
        let after: u64 = self
            .with(move |c| {
                c.query_row(
                    "SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = ?1 AND event_id IS NOT NULL",
                    [&id],
                    |r| r.get::<_, i64>(0),
                )
                .map(|n| n as u64)
                .map_err(db_err)
            })
            .await?;
        self.events(session_id, after, u32::MAX).await
    }

    /// Appends events in one transaction, skipping any whose id is already stored,
    /// and moves the mission's status and last event id along. Returns the events
    /// that were new, with their positions.
    pub async fn append(
        &self,
        session_id: &str,
        events: Vec<MissionEvent>,
    ) -> Result<Vec<StoredEvent>> {
        Ok(self.append_at(session_id, events, None).await?.events)
    }

    /// [`Self::append`], and in the same transaction the stream's cursor: `Some((next,
    /// covered))` when the first `covered` events complete the stream's lines up to
    /// position `next`. The status is moved here, once, by the lifecycle's fold.
    pub async fn append_at(
        &self,
        session_id: &str,
        events: Vec<MissionEvent>,
        cursor: Option<(u64, usize)>,
    ) -> Result<Appended> {
        let id = session_id.to_owned();
        self.with(move |c| {
            // IMMEDIATE takes the write lock before reading the next position, so a
            // second process appending to the same mission cannot take the same one.
            let tx = c
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(db_err)?;
            let (mut status, mut next): (MissionStatus, u64) = tx
                .query_row(
                    "SELECT m.status, COALESCE((SELECT MAX(seq) FROM events e WHERE e.session_id = m.session_id), 0) + 1
                     FROM missions m WHERE m.session_id = ?1",
                    [&id],
                    |r| Ok((MissionStatus::parse(&r.get::<_, String>(0)?), r.get::<_, i64>(1)? as u64)),
                )
                .map_err(db_err)?;
            let now = now_ms();
            let mut stored = Vec::new();
            let mut read = Vec::new();
            let mut last_id = None;
            let mut covered_seq = (cursor.is_some_and(|(_, n)| n == 0)).then(|| next - 1);
            // Read from the stored records only when a record's meaning depends on them.
            let mut turns: Option<TurnTracker> = None;
            for (i, event) in events.into_iter().enumerate() {
                let covers = cursor.is_some_and(|(_, n)| i + 1 == n);
                let inserted = tx
                    .execute(
                        "INSERT OR IGNORE INTO events (session_id, seq, event_id, event, data, received_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![id, next as i64, event.id, event.event, event.data.to_string(), now],
                    )
                    .map_err(db_err)?;
                if inserted == 0 {
                    if covers {
                        covered_seq = Some(next - 1);
                    }
                    continue;
                }
                let facts = protocol::read(&event);
                if turns.is_none() && TurnTracker::depends_on_history(&facts) {
                    turns = Some(turns_before(&tx, &id, next)?);
                }
                status = match turns.as_mut() {
                    Some(turns) => status.after_tracked(&facts, turns),
                    None => status.after(&facts),
                };
                if event.id.is_some() {
                    last_id = event.id.clone();
                }
                if let Some(token) = facts.iter().find_map(|f| match f {
                    Fact::Waiting {
                        continuation_token: Some(token),
                    } => Some(token),
                    _ => None,
                }) {
                    // Only a mission of eve's token generation keeps one: its create answer
                    // gave a token, or its stream named version 20 or below. Later
                    // generations may name the session id here, and refuse it back.
                    tx.execute(
                        "UPDATE missions SET continuation_token = ?2
                         WHERE session_id = ?1 AND continuation_token IS NOT NULL",
                        params![id, token],
                    )
                    .map_err(db_err)?;
                }
                read.push(facts);
                stored.push(StoredEvent::new(next, event, now));
                if covers {
                    covered_seq = Some(next);
                }
                next += 1;
            }
            if let (Some((position, _)), Some(seq)) = (cursor, covered_seq) {
                tx.execute(
                    "UPDATE missions SET stream_cursor = ?2, cursor_seq = ?3 WHERE session_id = ?1",
                    params![id, position as i64, seq as i64],
                )
                .map_err(db_err)?;
            }
            tx.execute(
                "UPDATE missions SET status = ?2, updated_at = ?3, last_event_id = COALESCE(?4, last_event_id)
                 WHERE session_id = ?1",
                params![id, status.as_str(), now, last_id],
            )
            .map_err(db_err)?;
            tx.commit().map_err(db_err)?;
            Ok(Appended {
                events: stored,
                facts: read,
                status,
            })
        })
        .await
    }

    /// How many of the mission's events pass `filter`.
    pub async fn count(&self, session_id: &str, filter: &EventFilter) -> Result<u64> {
        let (id, f) = (session_id.to_owned(), filter.clone());
        self.with(move |c| {
            if f.searches_text() {
                index_text(c)?;
            }
            count_in(c, &id, &f)
        })
        .await
    }

    /// One page of a timeline, counted and read in one snapshot: how many events pass
    /// `filter`, and at most `limit` of them in order from position `offset` (0-based
    /// among those that pass). `None` reads the end instead: whole pages of `limit`
    /// from the one that leaves at least `limit` before the end (fewer only when fewer
    /// pass), so a window that follows the end gets all it shows in one call, read
    /// backwards from the end instead of stepping over everything before it.
    pub async fn page(
        &self,
        session_id: &str,
        filter: &EventFilter,
        offset: Option<u64>,
        limit: u32,
    ) -> Result<EventPage> {
        let (id, f) = (session_id.to_owned(), filter.clone());
        self.with(move |c| {
            if f.searches_text() {
                index_text(c)?;
            }
            let tx = c.transaction().map_err(db_err)?;
            let total = count_in(&tx, &id, &f)?;
            let limit = u64::from(limit.min(MAX_PAGE));
            let (clause, mut args) = f.sql(&id);
            let (offset, backwards) = match offset {
                Some(offset) => {
                    args.push((limit as i64).into());
                    args.push((offset.min(i64::MAX as u64) as i64).into());
                    (offset, false)
                }
                None => {
                    let start = match limit {
                        0 => total,
                        _ => total.saturating_sub(limit) / limit * limit,
                    };
                    args.push(((total - start) as i64).into());
                    (start, true)
                }
            };
            let order = match backwards {
                false => "ORDER BY seq LIMIT ? OFFSET ?",
                true => "ORDER BY seq DESC LIMIT ?",
            };
            let mut stmt = tx
                .prepare_cached(&format!(
                    "SELECT seq, event_id, event, data, received_at FROM events e WHERE {clause} {order}"
                ))
                .map_err(db_err)?;
            let mut events = stmt
                .query_map(rusqlite::params_from_iter(args), row_to_event)
                .map_err(db_err)?
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(db_err)?;
            drop(stmt);
            tx.finish().map_err(db_err)?;
            if backwards {
                events.reverse();
            }
            Ok(EventPage {
                total,
                offset,
                events,
            })
        })
        .await
    }

    /// Each kind of event the mission has, with its label and how many there are.
    pub async fn kinds(&self, session_id: &str) -> Result<Vec<KindCount>> {
        let id = session_id.to_owned();
        self.with(move |c| {
            let mut stmt = c
                .prepare(
                    "SELECT event, COUNT(*) FROM events WHERE session_id = ?1 GROUP BY event ORDER BY event",
                )
                .map_err(db_err)?;
            let rows = stmt
                .query_map([&id], |r| {
                    let event: String = r.get(0)?;
                    Ok(KindCount {
                        label: cards::label(&event),
                        event,
                        count: r.get::<_, i64>(1)? as u64,
                    })
                })
                .map_err(db_err)?;
            rows.collect::<std::result::Result<Vec<_>, _>>()
                .map_err(db_err)
        })
        .await
    }

    /// Events after position `after_seq`, at most `limit`.
    pub async fn events(
        &self,
        session_id: &str,
        after_seq: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>> {
        let id = session_id.to_owned();
        self.with(move |c| events_after(c, &id, after_seq, limit))
            .await
    }
}

/// Events after position `after`, at most `limit`, in order.
pub(super) fn events_after(
    c: &Connection,
    id: &str,
    after: u64,
    limit: u32,
) -> Result<Vec<StoredEvent>> {
    let mut stmt = c
        .prepare_cached(
            "SELECT seq, event_id, event, data, received_at FROM events
             WHERE session_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
        )
        .map_err(db_err)?;
    let rows = stmt
        .query_map(params![id, after as i64, limit], row_to_event)
        .map_err(db_err)?;
    rows.collect::<std::result::Result<Vec<_>, _>>()
        .map_err(db_err)
}
