//! The conversation kept beside the records (schema 5): a window opens a long mission by
//! reading its newest items and pages back by item, never by record. The records stay
//! the truth; whenever the kept conversation is behind them (an older Casebook wrote
//! them, a crash came between the two writes, another process appended), it is
//! continued from the first record it has not read.

use crate::error::Result;
use crate::missions::conversation::{
    Conversation, ConversationChanges, ConversationFacts, Item, ItemKind, Progress, Source,
};
use crate::missions::spend::BudgetUse;
use crate::missions::store::{Appended, MissionStore, db_err};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use ts_rs::TS;

/// The newest items a window opens on: more than a screen shows, and far fewer than a
/// page, since every item drawn costs the window's web process memory. The window pages
/// older ones in (by `ConversationView`'s PAGE) as the reader scrolls back.
pub const WINDOW_TAIL: u32 = 40;
/// Sources a window opens on; more are read when asked.
pub const SOURCE_PAGE: u32 = 40;
/// The most items or sources one call returns.
const MAX_ITEMS: u32 = 1_000;
/// Records read at a time while catching up.
const CATCH_UP_BATCH: u32 = 5_000;

/// What a batch of appended records changed in the conversation, to send and then keep:
/// the follower's, and a generated history's, one way.
pub struct Folded {
    pub changes: ConversationChanges,
    progress: Progress,
    upto: u64,
    sources_before: usize,
}

impl Folded {
    /// Continues `conversation` with the records `appended` wrote (none it has read).
    pub fn of(conversation: &mut Conversation, appended: &Appended) -> Folded {
        let sources_before = conversation.sources.len();
        for (e, facts) in appended.events.iter().zip(&appended.facts) {
            // Records the stored conversation already read change nothing twice.
            if e.seq > conversation.upto() {
                conversation.take_facts(facts, e.seq);
            }
        }
        Folded {
            changes: conversation.take_changes(),
            progress: conversation.progress.clone(),
            upto: appended.events.last().map_or(0, |e| e.seq),
            sources_before,
        }
    }
}

/// A slice of a mission's conversation, with its figures.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct ConversationPage {
    pub facts: ConversationFacts,
    /// The index of the first of `items`.
    pub offset: u32,
    pub items: Vec<Item>,
    /// The first sources found (at most a page; `facts.sources` says how many in all).
    pub sources: Vec<Source>,
}

/// Items whose text has what was searched for.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct ConversationHits {
    /// What was searched for, as asked (a window drawing answers as they come can tell
    /// which query each one answers).
    pub query: String,
    /// How many items match in all.
    pub total: u32,
    /// The first `limit` of them, in order.
    pub items: Vec<ConversationHit>,
}

/// One item that matches, as a results list shows it: not the item itself, whose text
/// may be a whole report, but a line around its first match. A search asked at every
/// keystroke sends the window a few kilobytes, not every matching item whole.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct ConversationHit {
    pub index: u32,
    pub kind: ItemKind,
    /// The item's text around its first match, on one line, `…` where it was cut.
    pub snippet: String,
}

/// Characters of a hit's snippet before its match, and in all.
const SNIPPET_BEFORE: usize = 60;
const SNIPPET_CHARS: usize = 220;

/// `text` around the first match of `query` (blind to ASCII case, as the search is), on
/// one line and at most [`SNIPPET_CHARS`] characters, with `…` where it was cut.
pub fn snippet(text: &str, query: &str) -> String {
    let query = query.trim();
    let at = if query.is_empty() {
        0
    } else {
        text.char_indices()
            .map(|(i, _)| i)
            .find(|&i| {
                text.as_bytes()
                    .get(i..i + query.len())
                    .is_some_and(|b| b.eq_ignore_ascii_case(query.as_bytes()))
            })
            .unwrap_or(0)
    };
    // Start SNIPPET_BEFORE characters before the match, on a character boundary.
    let from = text[..at]
        .char_indices()
        .rev()
        .nth(SNIPPET_BEFORE - 1)
        .map_or(0, |(i, _)| i);
    let mut out = String::with_capacity(SNIPPET_CHARS + 8);
    if from > 0 {
        out.push('…');
    }
    let (mut n, mut cut) = (0, false);
    'words: for (k, word) in text[from..].split_whitespace().enumerate() {
        for c in (k > 0).then_some(' ').into_iter().chain(word.chars()) {
            if n == SNIPPET_CHARS {
                cut = true;
                break 'words;
            }
            out.push(c);
            n += 1;
        }
    }
    if cut {
        out.push('…');
    }
    out
}

/// What is kept: where it stands, and the records read.
struct Kept {
    upto: u64,
    progress: Progress,
}

impl MissionStore {
    /// The whole conversation, up to date with every stored record (what a watcher
    /// continues as records arrive).
    pub async fn conversation(&self, session_id: &str) -> Result<(Conversation, u64)> {
        let id = session_id.to_owned();
        self.with(move |c| {
            let (conv, upto) = load(c, &id)?;
            catch_up(c, &id, conv, upto)
        })
        .await
    }

    /// Keeps what a batch of records changed (after a watcher sent it).
    pub async fn save_conversation(&self, session_id: &str, folded: Folded) -> Result<()> {
        let id = session_id.to_owned();
        self.with(move |c| {
            let Folded {
                changes,
                progress,
                upto,
                sources_before,
            } = folded;
            save(c, &id, &changes, &progress, upto, sources_before)
        })
        .await
    }

    /// The conversation's figures, its newest `tail` items and its first sources.
    pub async fn conversation_tail(&self, session_id: &str, tail: u32) -> Result<ConversationPage> {
        let id = session_id.to_owned();
        self.with(move |c| {
            let facts = facts_caught_up(c, &id)?;
            let limit = tail.min(MAX_ITEMS);
            let offset = facts.items.saturating_sub(limit);
            Ok(ConversationPage {
                items: items_in(c, &id, offset, limit)?,
                sources: sources_in(c, &id, 0, SOURCE_PAGE)?,
                offset,
                facts,
            })
        })
        .await
    }

    /// At most `limit` items from index `offset`, with the figures.
    pub async fn conversation_items(
        &self,
        session_id: &str,
        offset: u32,
        limit: u32,
    ) -> Result<ConversationPage> {
        let id = session_id.to_owned();
        self.with(move |c| {
            let facts = facts_caught_up(c, &id)?;
            Ok(ConversationPage {
                items: items_in(c, &id, offset, limit.min(MAX_ITEMS))?,
                sources: Vec::new(),
                offset,
                facts,
            })
        })
        .await
    }

    /// At most `limit` sources from the `offset`-th found.
    pub async fn conversation_sources(
        &self,
        session_id: &str,
        offset: u32,
        limit: u32,
    ) -> Result<Vec<Source>> {
        let id = session_id.to_owned();
        self.with(move |c| sources_in(c, &id, offset, limit.min(MAX_ITEMS)))
            .await
    }

    /// The items whose text has `query` (case-blind for ASCII letters), the first
    /// `limit` of them.
    pub async fn search_conversation(
        &self,
        session_id: &str,
        query: &str,
        limit: u32,
    ) -> Result<ConversationHits> {
        let id = session_id.to_owned();
        let query = query.to_owned();
        let pattern = format!(
            "%{}%",
            query
                .trim()
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        self.with(move |c| {
            facts_caught_up(c, &id)?;
            let total: u32 = c
                .prepare_cached(
                    "SELECT COUNT(*) FROM conversation_items WHERE session_id = ?1 AND text LIKE ?2 ESCAPE '\\'",
                )
                .and_then(|mut s| s.query_row(params![id, pattern], |r| r.get(0)))
                .map_err(db_err)?;
            let mut stmt = c
                .prepare_cached(
                    "SELECT idx, kind, text FROM conversation_items WHERE session_id = ?1 AND text LIKE ?2 ESCAPE '\\'
                     ORDER BY idx LIMIT ?3",
                )
                .map_err(db_err)?;
            let items = stmt
                .query_map(params![id, pattern, limit.min(MAX_ITEMS)], |r| {
                    Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
                })
                .map_err(db_err)?
                .filter_map(|r| r.ok())
                .filter_map(|(index, kind, text)| {
                    Some(ConversationHit {
                        index,
                        kind: ItemKind::parse(&kind)?,
                        snippet: snippet(&text, &query),
                    })
                })
                .collect();
            Ok(ConversationHits { query, total, items })
        })
        .await
    }
}

fn kept(c: &Connection, id: &str) -> Result<Option<Kept>> {
    c.query_row(
        "SELECT upto_seq, progress FROM conversations WHERE session_id = ?1",
        [id],
        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
    )
    .optional()
    .map_err(db_err)
    .map(|row| {
        row.map(|(upto, progress)| Kept {
            upto: upto.max(0) as u64,
            // A progress this build cannot read is rebuilt from the records.
            progress: serde_json::from_str(&progress).unwrap_or_default(),
        })
    })
}

fn last_seq(c: &Connection, id: &str) -> Result<u64> {
    c.query_row(
        "SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = ?1",
        [id],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n.max(0) as u64)
    .map_err(db_err)
}

fn load(c: &Connection, id: &str) -> Result<(Conversation, u64)> {
    let Some(k) = kept(c, id)? else {
        return Ok((Conversation::default(), 0));
    };
    let items = items_in(c, id, 0, u32::MAX)?;
    let sources = sources_in(c, id, 0, u32::MAX)?;
    Ok((Conversation::restore(items, sources, k.progress), k.upto))
}

/// The conversation continued with every record after `upto`, and kept.
fn catch_up(
    c: &mut Connection,
    id: &str,
    mut conv: Conversation,
    mut upto: u64,
) -> Result<(Conversation, u64)> {
    let last = last_seq(c, id)?;
    if last <= upto && kept(c, id)?.is_some() {
        return Ok((conv, upto));
    }
    // Rebuilt from the start when what is kept is gone or unreadable.
    if upto == 0 {
        conv = Conversation::default();
    }
    let sources_before = conv.sources.len();
    loop {
        let events = super::events::events_after(c, id, upto, CATCH_UP_BATCH)?;
        let Some(end) = events.last().map(|e| e.seq) else {
            break;
        };
        for e in &events {
            conv.apply_at(&e.event, e.seq);
        }
        upto = end;
    }
    let changes = conv.take_changes();
    let progress = conv.progress.clone();
    save(c, id, &changes, &progress, upto, sources_before)?;
    Ok((conv, upto))
}

/// The figures, after catching up if the records moved on.
pub(super) fn facts_caught_up(c: &mut Connection, id: &str) -> Result<ConversationFacts> {
    let mut facts = facts_as_kept(c, id)?;
    let budget: Option<i64> = c
        .query_row(
            "SELECT budget_cents FROM missions WHERE session_id = ?1",
            [id],
            |r| r.get(0),
        )
        .optional()
        .map_err(db_err)?;
    facts.budget = budget.and_then(|cents| BudgetUse::of(facts.spent_usd, cents.max(0) as u64));
    Ok(facts)
}

/// The figures as kept, after catching up if the records moved on.
fn facts_as_kept(c: &mut Connection, id: &str) -> Result<ConversationFacts> {
    let behind = match kept(c, id)? {
        Some(k) => last_seq(c, id)? > k.upto,
        None => true,
    };
    if behind {
        let (conv, upto) = load(c, id)?;
        let (conv, _) = catch_up(c, id, conv, upto)?;
        return Ok(conv.facts());
    }
    let facts: Option<String> = c
        .query_row(
            "SELECT facts FROM conversations WHERE session_id = ?1",
            [id],
            |r| r.get(0),
        )
        .optional()
        .map_err(db_err)?;
    Ok(facts
        .and_then(|f| serde_json::from_str::<StoredFacts>(&f).ok())
        .map(StoredFacts::into_facts)
        .unwrap_or_default())
}

/// The figures as kept (ConversationFacts only serializes).
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct StoredFacts {
    records: u64,
    items: u32,
    sources: u32,
    activity: Option<String>,
    spent_usd: Option<f64>,
    report: Option<u32>,
}

impl StoredFacts {
    fn into_facts(self) -> ConversationFacts {
        ConversationFacts {
            records: self.records,
            items: self.items,
            sources: self.sources,
            activity: self.activity,
            spent_usd: self.spent_usd,
            report: self.report,
            budget: None,
        }
    }
}

fn save(
    c: &mut Connection,
    id: &str,
    changes: &ConversationChanges,
    progress: &Progress,
    upto: u64,
    sources_before: usize,
) -> Result<()> {
    // The write lock first: preparing these statements reads the search index's
    // settings, and a transaction that has read cannot wait for another's write lock
    // (SQLite answers "database is locked" at once: a `show` polled during a `watch`).
    let tx = c
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(db_err)?;
    // Two writers keep the same conversation (a watch, and a `show` catching up from
    // what it read before the watch wrote): one that has kept as far or further already
    // holds all this says, and a conversation kept backwards would read the records
    // after it twice.
    if kept(&tx, id)?.is_some_and(|k| k.upto >= upto) {
        return Ok(());
    }
    {
        let mut put = tx
            .prepare_cached(
                // An update in place, not a replace: a replace deletes without the
                // search index's trigger (schema 9) hearing of it.
                "INSERT INTO conversation_items (session_id, idx, kind, text, item, open)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (session_id, idx) DO UPDATE SET
                    kind = excluded.kind, text = excluded.text, item = excluded.item, open = excluded.open",
            )
            .map_err(db_err)?;
        for item in &changes.items {
            let json = serde_json::to_string(item).unwrap_or_default();
            put.execute(params![
                id,
                item.index,
                item.kind.as_str(),
                searchable(item),
                json,
                item.open
            ])
            .map_err(db_err)?;
        }
        let mut src = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO conversation_sources (session_id, n, url, title, item, found_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .map_err(db_err)?;
        for (i, s) in changes.sources.iter().enumerate() {
            src.execute(params![
                id,
                (sources_before + i) as i64,
                s.url,
                s.title,
                s.item,
                s.found_by
            ])
            .map_err(db_err)?;
        }
    }
    tx.execute(
        "INSERT OR REPLACE INTO conversations (session_id, upto_seq, progress, facts) VALUES (?1, ?2, ?3, ?4)",
        params![
            id,
            upto as i64,
            serde_json::to_string(progress).unwrap_or_default(),
            serde_json::to_string(&changes.facts).unwrap_or_default()
        ],
    )
    .map_err(db_err)?;
    tx.commit().map_err(db_err)
}

/// What a search finds an item by: its text, and a step's name, input, output and
/// sources, a question's options and answer.
fn searchable(item: &Item) -> String {
    let mut s = item.text.clone();
    if let Some(step) = &item.step {
        for part in [
            Some(&step.name),
            Some(&step.input),
            step.output.as_ref(),
            step.error.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            s.push('\n');
            s.push_str(part);
        }
        for src in &step.sources {
            s.push('\n');
            s.push_str(src.title.as_deref().unwrap_or(""));
            s.push(' ');
            s.push_str(&src.url);
        }
    }
    if let Some(r) = &item.request {
        for o in &r.options {
            s.push('\n');
            s.push_str(&o.label);
        }
        if let Some(a) = &r.answer {
            s.push('\n');
            s.push_str(a);
        }
    }
    s
}

fn items_in(c: &Connection, id: &str, offset: u32, limit: u32) -> Result<Vec<Item>> {
    let mut stmt = c
        .prepare_cached(
            "SELECT item FROM conversation_items WHERE session_id = ?1 AND idx >= ?2 ORDER BY idx LIMIT ?3",
        )
        .map_err(db_err)?;
    let rows = stmt
        .query_map(params![id, offset, i64::from(limit)], |r| {
            r.get::<_, String>(0)
        })
        .map_err(db_err)?;
    let mut items = Vec::new();
    for json in rows {
        let json = json.map_err(db_err)?;
        match serde_json::from_str(&json) {
            Ok(item) => items.push(item),
            Err(e) => tracing::warn!("a stored conversation item cannot be read: {e}"),
        }
    }
    Ok(items)
}

fn sources_in(c: &Connection, id: &str, offset: u32, limit: u32) -> Result<Vec<Source>> {
    let mut stmt = c
        .prepare_cached(
            "SELECT url, title, item, found_by FROM conversation_sources WHERE session_id = ?1 AND n >= ?2 ORDER BY n LIMIT ?3",
        )
        .map_err(db_err)?;
    let rows = stmt
        .query_map(params![id, offset, i64::from(limit)], |r| {
            Ok(Source {
                url: r.get(0)?,
                title: r.get(1)?,
                item: r.get(2)?,
                found_by: r.get(3)?,
            })
        })
        .map_err(db_err)?;
    rows.collect::<std::result::Result<Vec<_>, _>>()
        .map_err(db_err)
}

#[cfg(test)]
mod tests {
    use super::snippet;

    #[test]
    fn a_snippet_is_one_line_around_the_first_match_cut_where_the_text_goes_on() {
        assert_eq!(
            snippet("Heat  raises\n\nadmissions", "RAISES"),
            "Heat raises admissions"
        );
        let long = format!("{}the needle {}", "word ".repeat(40), "tail ".repeat(80));
        let s = snippet(&long, "NEEDLE");
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        let before = &s[..s.find("needle").unwrap()];
        // About 60 characters before the match (a space where it starts is not shown).
        let n = before.chars().count();
        assert!((1 + 58..=1 + 60).contains(&n), "{n} before the match: {s}");
        assert_eq!(s.chars().count(), 1 + 220 + 1, "{s}");
        // Cut on characters, not bytes; no match shows the start.
        let greek = "αβγ ".repeat(200);
        assert!(snippet(&greek, "zzz").starts_with("αβγ αβγ"));
        assert_eq!(snippet(&greek, "zzz").chars().count(), 221);
        assert_eq!(snippet("short", "short"), "short");
    }
}
