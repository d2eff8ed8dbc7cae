//! The full-text index over the records (`events_text`, FTS5 with the trigram tokenizer):
//! brought up to date after each append, and on open for a history written before it.

use super::*;

/// Indexes the events after `events_text_upto`, and moves it past them: how many.
/// IMMEDIATE: another process writing the same database waits, so no event is
/// indexed twice (a contentless index would count it twice) or skipped.
pub(super) fn index_text(c: &mut Connection) -> Result<u64> {
    let pending = |c: &Connection| -> rusqlite::Result<(i64, i64)> {
        c.query_row(
            "SELECT (SELECT upto FROM events_text_upto), (SELECT COALESCE(MAX(rowid), 0) FROM events)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    };
    // Nothing new is the usual answer for a search: no write lock for it.
    let (upto, last) = pending(c).map_err(db_err)?;
    if last <= upto {
        return Ok(0);
    }
    let tx = c
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(db_err)?;
    let (upto, last) = pending(&tx).map_err(db_err)?;
    let added = tx
        .execute(
            "INSERT INTO events_text(rowid, body)
             SELECT rowid, event || ' ' || data FROM events WHERE rowid > ?1 AND rowid <= ?2",
            params![upto, last],
        )
        .map_err(db_err)?;
    tx.execute("UPDATE events_text_upto SET upto = ?1", [last.max(upto)])
        .map_err(db_err)?;
    tx.commit().map_err(db_err)?;
    Ok(added as u64)
}

impl MissionStore {
    /// Puts every event written since the last call into the search index. Writers
    /// call it once their events are on their way (the follower, after it has sent
    /// them); a search calls it first too, so it covers every event whoever wrote them,
    /// even after a writer was killed between the two.
    pub async fn index_text(&self) -> Result<u64> {
        self.with(index_text).await
    }
}
