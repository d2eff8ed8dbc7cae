//! A delegated sub-agent's own conversation, opened from its parent's step: its stream
//! is read only then ([`crate::missions::stream::child`]), to where it stands, and its
//! records are kept beside the parent's (`subagents`, `subagent_events`), so it opens
//! again offline and a later opening reads on from where the last one stopped.

use crate::error::{Error, ErrorCode, Result};
use crate::missions::client::InvestigationClient;
use crate::missions::conversation::{
    ChildRef, Conversation, ConversationFacts, Item, Message, Source,
};
use crate::missions::lifecycle::MissionStatus;
use crate::missions::protocol::{self, Fact, MissionEvent};
use crate::missions::store::{MissionStore, db_err};
use crate::missions::stream::child::{ChildCursor, ChildLimits, ChildRead};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use ts_rs::TS;

/// The most records of one sub-agent shown (and kept).
pub const MAX_CHILD_RECORDS: u32 = 100_000;

/// A sub-agent's conversation as it stood when last read.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct SubAgent {
    pub call_id: String,
    pub session_id: String,
    /// The agent's name (`researcher`).
    pub name: String,
    /// Where its session stands: `running` until its records say it waits or ended.
    pub status: MissionStatus,
    pub items: Vec<Item>,
    /// Every source it found, once per URL.
    pub sources: Vec<Source>,
    pub messages: Vec<Message>,
    pub facts: ConversationFacts,
    /// Reading its stream failed this time: what is shown is what was kept, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stale: Option<String>,
    /// The last opening stopped at a bound before the newest record: open again for more.
    pub more: bool,
    /// When its stream was last read (Unix milliseconds); 0 if never.
    #[ts(type = "number")]
    pub read_at: i64,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// What is kept of a sub-agent besides its records.
#[derive(Debug, Clone, Default)]
struct Kept {
    cursor: ChildCursor,
    /// Its stream said it is finished, or its session ended: never read again.
    finished: bool,
    more: bool,
    read_at: i64,
}

/// The sub-agent `which` (its call id, or its session id) of the mission `parent`, as its
/// parent's records name it.
pub async fn find(store: &MissionStore, parent: &str, which: &str) -> Result<(ChildRef, String)> {
    let (conv, _) = store.conversation(parent).await?;
    let mut named = Vec::new();
    let mut by_name = Vec::new();
    for step in conv.items.iter().filter_map(|i| i.step.as_ref()) {
        if let Some(child) = &step.child {
            if child.call_id == which || child.session_id == which {
                return Ok((child.clone(), step.name.clone()));
            }
            if step.name.eq_ignore_ascii_case(which) {
                by_name.push((child.clone(), step.name.clone()));
            }
            named.push(format!("{} ({})", child.call_id, step.name));
        }
    }
    // Its name, when only one sub-agent has it.
    if let [one] = by_name.as_slice() {
        return Ok(one.clone());
    }
    let has = if named.is_empty() {
        "it delegated to none".to_owned()
    } else {
        format!("its sub-agents' calls are {}", named.join(", "))
            + if by_name.len() > 1 {
                "; several have that name, so name the call"
            } else {
                ""
            }
    };
    Err(Error::new(
        ErrorCode::NotFound,
        format!("Mission {parent} has no sub-agent {which:?}: {has}."),
    ))
}

/// Opens the sub-agent `which` of `parent`: reads its stream on from where the last
/// opening stopped (unless it has finished), keeps what came, and gives its
/// conversation. With no service to ask (`client` failed) or a failed read, what was
/// kept is shown, saying why; never opened before, the failure is the answer.
pub async fn open(
    store: &MissionStore,
    client: Result<InvestigationClient>,
    parent: &str,
    which: &str,
    limits: ChildLimits,
) -> Result<SubAgent> {
    let (child, name) = find(store, parent, which).await?;
    let kept = store.kept_child(parent, &child.call_id).await?;
    let mut stale = None;
    if !kept.as_ref().is_some_and(|k| k.finished) {
        let from = kept.as_ref().map(|k| k.cursor.clone()).unwrap_or_default();
        let read = match client {
            Ok(c) => c.read_child(parent, &child, &from, limits).await,
            Err(e) => Err(e),
        };
        match read {
            Ok(read) => store.keep_child(parent, &child, &name, read).await?,
            Err(e) if kept.is_some() => stale = Some(e.message),
            Err(e) => return Err(e),
        }
    }
    stored(store, parent, &child, &name, stale).await
}

/// The sub-agent as kept, without asking the service.
pub async fn stored(
    store: &MissionStore,
    parent: &str,
    child: &ChildRef,
    name: &str,
    stale: Option<String>,
) -> Result<SubAgent> {
    let kept = store
        .kept_child(parent, &child.call_id)
        .await?
        .unwrap_or_default();
    let events = store.child_events(parent, &child.call_id).await?;
    let mut conv = Conversation::default();
    let mut status = MissionStatus::Running;
    for (seq, e) in events.iter().enumerate() {
        conv.apply_at(e, seq as u64 + 1);
        status = status.after(&protocol::read(e));
    }
    conv.take_changes();
    Ok(SubAgent {
        call_id: child.call_id.clone(),
        session_id: child.session_id.clone(),
        name: name.to_owned(),
        status,
        messages: conv.messages(),
        facts: conv.facts(),
        items: conv.items,
        sources: conv.sources,
        stale,
        more: kept.more,
        read_at: kept.read_at,
    })
}

impl MissionStore {
    async fn kept_child(&self, parent: &str, call: &str) -> Result<Option<Kept>> {
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
    async fn keep_child(
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

    async fn child_events(&self, parent: &str, call: &str) -> Result<Vec<MissionEvent>> {
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
