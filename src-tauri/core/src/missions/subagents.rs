//! A delegated sub-agent's own conversation, opened from its parent's step: its stream
//! is read only then ([`crate::missions::stream::child`]), to where it stands, and its
//! records are kept beside the parent's ([`crate::missions::store::subagents`]), so it opens
//! again offline and a later opening reads on from where the last one stopped.

use crate::error::{Error, ErrorCode, Result};
use crate::missions::client::InvestigationClient;
use crate::missions::conversation::{
    ChildRef, Conversation, ConversationFacts, Item, Message, Source,
};
use crate::missions::lifecycle::MissionStatus;
use crate::missions::protocol;
use crate::missions::store::MissionStore;
use crate::missions::stream::child::ChildLimits;
use serde::Serialize;
use ts_rs::TS;

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
