//! One search across every mission in the history (schema 9): objectives by `LIKE` (there
//! are hundreds), conversations through `items_text`, a trigram index over the kept items
//! that triggers keep up to date as items are written. An item still open (a reply as it
//! streams) grows with every batch, so it enters the index once it closes; until then it
//! is searched by `LIKE`, over the few open ones.

use crate::error::Result;
use crate::missions::conversation::ItemKind;
use crate::missions::store::conversations::{facts_caught_up, snippet};
use crate::missions::store::{MissionStatus, MissionStore, db_err};
use rusqlite::{Connection, params};
use serde::Serialize;
use ts_rs::TS;

/// The fewest characters the index finds inside a word: it indexes every three.
pub const MIN_QUERY_CHARS: usize = 3;
/// The most hits one search answers with.
const MAX_HITS: u32 = 200;
/// The newest matching items a search ranks. A word every mission's conversation holds
/// matched 406,000 items of a history of 1,000 missions: ranked by the index, a phrase
/// took 0.5 s, since its BM25 counts every item that has it. Ranked here, each candidate's
/// text is read, a page each: from disk the newest 2,000 took the window 115-159 ms
/// (median of ten searches), the newest 500 81 ms; from the page cache 8 ms in Rust
/// (docs/performance.md, "Many missions"). More than a window's hits, fewer than a disk
/// reads at a keystroke.
const RANKED: u32 = 500;
/// FTS5's BM25 constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// An item's BM25 for one phrase, but the phrase's weight (its IDF), the same for every
/// item: the order is BM25's. `count` times in `len` characters, `average` the candidates'.
fn bm25_order(count: usize, len: usize, average: f64) -> f64 {
    let tf = count as f64;
    tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len as f64 / average.max(1.0)))
}

/// How often `needle` (lower case) is in `text`, blind to case as the index is.
fn occurrences(text: &str, needle: &str) -> usize {
    text.to_lowercase().matches(needle).count()
}

/// Where in a mission a hit is: its objective, or one of its conversation's items.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum HitPlace {
    Objective,
    Item { index: u32, kind: ItemKind },
}

/// One place in the history that has what was searched for.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct MissionHit {
    pub session_id: String,
    /// The mission's objective, on one line.
    pub headline: String,
    pub status: MissionStatus,
    pub place: HitPlace,
    /// The text around its first match, on one line, `…` where it was cut.
    pub snippet: String,
}

/// What a search across every mission found, the best first: objectives, then items as
/// the index ranks them (BM25, among the newest [`RANKED`] that match), then items still
/// streaming.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct MissionHits {
    /// What was searched for, as asked (answers drawn as they come say which query).
    pub query: String,
    pub hits: Vec<MissionHit>,
}

/// `text` as a `LIKE` pattern that finds it anywhere, `\` escaping.
fn like_pattern(text: &str) -> String {
    let escaped = (text.replace('\\', "\\\\"))
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

/// `text` as one FTS5 phrase: the trigram tokenizer then finds it as a substring.
fn phrase(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// Conversations the records have moved past (written by an older Casebook, or by a
/// process that stopped between the two writes) are brought up to date first, so the
/// index holds them.
fn catch_up_all(c: &mut Connection) -> Result<()> {
    let behind: Vec<String> = {
        let mut stmt = c
            .prepare_cached(
                "SELECT m.session_id FROM missions m LEFT JOIN conversations k USING (session_id)
                 WHERE COALESCE(k.upto_seq, 0) < COALESCE(
                     (SELECT MAX(seq) FROM events e WHERE e.session_id = m.session_id), 0)",
            )
            .map_err(db_err)?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(db_err)?;
        rows.collect::<std::result::Result<_, _>>()
            .map_err(db_err)?
    };
    for id in behind {
        facts_caught_up(c, &id)?;
    }
    Ok(())
}

/// An item that matched: its mission, index, kind and text.
type Found = (String, u32, String, String);

fn search(c: &mut Connection, query: &str, limit: u32) -> Result<Vec<MissionHit>> {
    let limit = limit.clamp(1, MAX_HITS);
    let mut found: Vec<(String, HitPlace, String)> = Vec::new();
    let pattern = like_pattern(query);
    {
        let mut stmt = c
            .prepare_cached(
                "SELECT session_id, objective FROM missions WHERE objective LIKE ?1 ESCAPE '\\'
                 ORDER BY updated_at DESC LIMIT ?2",
            )
            .map_err(db_err)?;
        let rows = stmt
            .query_map(params![pattern, limit], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(db_err)?;
        for row in rows {
            let (id, objective) = row.map_err(db_err)?;
            found.push((id, HitPlace::Objective, snippet(&objective, query)));
        }
    }
    let items = |c: &Connection, sql: &str, matching: &str| -> Result<Vec<Found>> {
        let mut stmt = c.prepare_cached(sql).map_err(db_err)?;
        let rows = stmt
            .query_map(params![matching], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, u32>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .map_err(db_err)?;
        rows.collect::<std::result::Result<_, _>>().map_err(db_err)
    };
    // Objectives first: when they fill the answer, the conversations are not asked.
    if query.chars().count() >= MIN_QUERY_CHARS && found.len() < limit as usize {
        let mut kept = items(
            c,
            &format!(
                "SELECT ci.session_id, ci.idx, ci.kind, ci.text FROM
                   (SELECT rowid FROM items_text WHERE items_text MATCH ?1
                    ORDER BY rowid DESC LIMIT {RANKED}) t
                 JOIN conversation_items ci ON ci.rowid = t.rowid"
            ),
            &phrase(query),
        )?;
        let needle = query.to_lowercase();
        let lens: Vec<usize> = kept.iter().map(|f| f.3.chars().count()).collect();
        let average = lens.iter().sum::<usize>() as f64 / lens.len().max(1) as f64;
        let mut scored: Vec<(f64, Found)> = (kept.drain(..).zip(lens))
            .map(|(f, len)| (bm25_order(occurrences(&f.3, &needle), len, average), f))
            .collect();
        // The best first; among equals, the newest (as the index gave them).
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let open = items(
            c,
            &format!(
                "SELECT session_id, idx, kind, text FROM conversation_items
                 WHERE open = 1 AND text LIKE ?1 ESCAPE '\\' LIMIT {limit}"
            ),
            &pattern,
        )?;
        let ranked = scored.into_iter().map(|(_, f)| f);
        for (id, index, kind, text) in ranked.chain(open).take(limit as usize) {
            if let Some(kind) = ItemKind::parse(&kind) {
                found.push((id, HitPlace::Item { index, kind }, snippet(&text, query)));
            }
        }
    }
    found.truncate(limit as usize);
    let mut missions = c
        .prepare_cached("SELECT objective, status FROM missions WHERE session_id = ?1")
        .map_err(db_err)?;
    let mut hits = Vec::with_capacity(found.len());
    for (session_id, place, snippet) in found {
        let (objective, status) = missions
            .query_row([&session_id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(db_err)?;
        hits.push(MissionHit {
            headline: objective.lines().next().unwrap_or("").trim().to_owned(),
            status: MissionStatus::parse(&status),
            session_id,
            place,
            snippet,
        });
    }
    Ok(hits)
}

impl MissionStore {
    /// Every mission's objective and conversation searched for `query` (blind to ASCII
    /// case), at most `limit` hits, the best first. Inside conversations a query needs
    /// [`MIN_QUERY_CHARS`] characters; objectives are searched for any.
    pub async fn search_missions(&self, query: &str, limit: u32) -> Result<MissionHits> {
        let query = query.to_owned();
        self.with(move |c| {
            let wanted = query.trim();
            if wanted.is_empty() {
                return Ok(MissionHits {
                    query,
                    hits: Vec::new(),
                });
            }
            catch_up_all(c)?;
            let hits = search(c, wanted, limit)?;
            Ok(MissionHits { query, hits })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_of_the_phrase_in_less_text_ranks_first() {
        let average = 100.0;
        assert!(bm25_order(3, 100, average) > bm25_order(1, 100, average));
        assert!(bm25_order(1, 50, average) > bm25_order(1, 400, average));
        assert_eq!(bm25_order(0, 10, average), 0.0);
        assert_eq!(occurrences("Heat, HEAT and heat", "heat"), 3);
    }

    #[test]
    fn a_query_is_matched_as_written() {
        assert_eq!(like_pattern(r"50%_a\b"), r"%50\%\_a\\b%");
        assert_eq!(phrase(r#"say "heat""#), r#""say ""heat""""#);
    }
}
