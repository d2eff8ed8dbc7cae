//! A delegated sub-agent's records and where its stream was last read, kept beside its
//! parent's (`subagents`, `subagent_events`): what one opening read is kept in one
//! transaction, so it opens again offline and a later opening reads on from there.

use super::{MissionStore, db_err, now_ms};
use crate::error::Result;
use crate::missions::conversation::ChildRef;
use crate::missions::protocol::{self, Fact, MissionEvent};
use crate::missions::stream::child::{ChildCursor, ChildRead};
use rusqlite::{OptionalExtension, params};

/// The most records of one sub-agent shown (and kept).
pub const MAX_CHILD_RECORDS: u32 = 100_000;

/// What is kept of a sub-agent besides its records.
#[derive(Debug, Clone, Default)]
pub(crate) struct Kept {
    pub cursor: ChildCursor,
    /// Its stream said it is finished, or its session ended: never read again.
    pub finished: bool,
    pub more: bool,
    pub read_at: i64,
}

impl MissionStore {
    pub(crate) async fn kept_child(&self, parent: &str, call: &str) -> Result<Option<Kept>> {
        let (parent, call) = (parent.to_owned(), call.to_owned());
        self.with(move |c| {
            c.query_row(
                "SELECT stream_cursor, last_event_id, finished, more, read_at FROM subagents
                 WHERE session_id = ?1 AND call_id = ?2",
                params![parent, call],
                |r| {
                    Ok(Kept {
                        cursor: ChildCursor {
                            next: r.get::<_, i64>(0)? as u64,
                            last_event_id: r.get(1)?,
                        },
                        finished: r.get(2)?,
                        more: r.get(3)?,
                        read_at: r.get(4)?,
                    })
                },
            )
            .optional()
            .map_err(db_err)
        })
        .await
    }

    /// Keeps what one opening read, and where it stopped, in one transaction.
    pub(crate) async fn keep_child(
        &self,
        parent: &str,
        child: &ChildRef,
        name: &str,
        read: ChildRead,
    ) -> Result<()> {
        let (parent, child, name) = (parent.to_owned(), child.clone(), name.to_owned());
        self.with(move |c| {
            let tx = c
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(db_err)?;
            tx.execute(
                "INSERT INTO subagents (session_id, call_id, child_id, name, read_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (session_id, call_id) DO NOTHING",
                params![parent, child.call_id, child.session_id, name, now_ms()],
            )
            .map_err(db_err)?;
            let mut next: i64 = tx
                .query_row(
                    "SELECT COALESCE(MAX(seq), 0) + 1 FROM subagent_events
                     WHERE session_id = ?1 AND call_id = ?2",
                    params![parent, child.call_id],
                    |r| r.get(0),
                )
                .map_err(db_err)?;
            let mut ended = false;
            for e in &read.events {
                if next > i64::from(MAX_CHILD_RECORDS) {
                    break;
                }
                ended |= protocol::read(e)
                    .iter()
                    .any(|f| matches!(f, Fact::SessionEnded { .. }));
                let n = tx
                    .execute(
                        "INSERT OR IGNORE INTO subagent_events (session_id, call_id, seq, event_id, event, data)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![parent, child.call_id, next, e.id, e.event, e.data.to_string()],
                    )
                    .map_err(db_err)?;
                next += n as i64;
            }
            tx.execute(
                "UPDATE subagents SET stream_cursor = ?3, last_event_id = COALESCE(?4, last_event_id),
                     finished = ?5, more = ?6, read_at = ?7
                 WHERE session_id = ?1 AND call_id = ?2",
                params![
                    parent,
                    child.call_id,
                    read.cursor.next as i64,
                    read.cursor.last_event_id,
                    read.finished || ended,
                    read.cut_short,
                    now_ms()
                ],
            )
            .map_err(db_err)?;
            tx.commit().map_err(db_err)
        })
        .await
    }

    pub(crate) async fn child_events(&self, parent: &str, call: &str) -> Result<Vec<MissionEvent>> {
        let (parent, call) = (parent.to_owned(), call.to_owned());
        self.with(move |c| {
            let mut stmt = c
                .prepare(
                    "SELECT event_id, event, data FROM subagent_events
                     WHERE session_id = ?1 AND call_id = ?2 ORDER BY seq LIMIT ?3",
                )
                .map_err(db_err)?;
            let rows = stmt
                .query_map(params![parent, call, MAX_CHILD_RECORDS], |r| {
                    let data: String = r.get(2)?;
                    Ok(MissionEvent::new(
                        r.get::<_, Option<String>>(0)?,
                        r.get::<_, String>(1)?,
                        &data,
                    ))
                })
                .map_err(db_err)?;
            rows.collect::<std::result::Result<Vec<_>, _>>()
                .map_err(db_err)
        })
        .await
    }
}
