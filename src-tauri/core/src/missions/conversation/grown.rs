//! What a window is sent of each batch's changes. A streaming reply changes with every
//! delta, and sent whole each time it was most of what crossed to the window: at 1,000
//! records a second a 300,000-character report went over 25 times a second, to be
//! parsed and thrown away. An open item that only grew by text is sent as what it grew
//! by, from the length the window holds; anything else is sent whole, as before.

use super::{ConversationChanges, Item};
use serde::Serialize;
use std::collections::HashMap;
use ts_rs::TS;

/// Text an open item grew by.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct TextAppended {
    pub index: u32,
    /// The length of the text it follows, in UTF-16 code units (JavaScript's `length`):
    /// a window holding another length reads the item whole instead.
    pub from: u32,
    pub text: String,
    #[ts(type = "number")]
    pub last_seq: u64,
}

/// The open items last sent to windows, to tell growth from any other change.
#[derive(Debug, Default)]
pub struct Grown {
    /// By index: the item as sent, and its text's UTF-16 length.
    sent: HashMap<u32, (Item, u32)>,
}

impl Grown {
    /// `changes` as sent to windows: items that only grew by text as [`TextAppended`].
    pub fn wire(&mut self, changes: &ConversationChanges) -> ConversationChanges {
        let mut items = Vec::new();
        let mut appended = Vec::new();
        for item in &changes.items {
            let len = match self.growth(item) {
                Some(grew) => {
                    let len = grew.from.saturating_add(utf16_len(&grew.text));
                    appended.push(grew);
                    len
                }
                None => {
                    items.push(item.clone());
                    utf16_len(&item.text)
                }
            };
            if item.open {
                self.sent.insert(item.index, (item.clone(), len));
            } else {
                self.sent.remove(&item.index);
            }
        }
        ConversationChanges {
            items,
            appended,
            sources: changes.sources.clone(),
            facts: changes.facts.clone(),
        }
    }

    /// What `item` grew by since it was last sent, when text at its end is all that changed.
    fn growth(&self, item: &Item) -> Option<TextAppended> {
        let (before, len) = self.sent.get(&item.index)?;
        let grew = item.text.strip_prefix(before.text.as_str())?;
        (item.open && same_but_text(item, before)).then(|| TextAppended {
            index: item.index,
            from: *len,
            text: grew.to_owned(),
            last_seq: item.last_seq,
        })
    }
}

/// Whether `a` and `b` differ only in their text and the record they were last changed by.
/// Every field is named, so a field added to [`Item`] must be placed here.
fn same_but_text(a: &Item, b: &Item) -> bool {
    let Item {
        index,
        kind,
        text: _,
        open,
        narration,
        html,
        step,
        request,
        sign_in,
        files,
        first_seq,
        last_seq: _,
    } = a;
    (
        index, kind, open, narration, html, step, request, sign_in, files, first_seq,
    ) == (
        &b.index,
        &b.kind,
        &b.open,
        &b.narration,
        &b.html,
        &b.step,
        &b.request,
        &b.sign_in,
        &b.files,
        &b.first_seq,
    )
}

fn utf16_len(s: &str) -> u32 {
    u32::try_from(s.encode_utf16().count()).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::missions::conversation::{ConversationFacts, ItemKind};

    fn reply(text: &str, open: bool, last_seq: u64) -> Item {
        Item {
            index: 3,
            kind: ItemKind::Assistant,
            text: text.into(),
            open,
            narration: false,
            html: None,
            step: None,
            request: None,
            sign_in: None,
            files: Vec::new(),
            first_seq: 10,
            last_seq,
        }
    }

    fn changes(items: Vec<Item>) -> ConversationChanges {
        ConversationChanges {
            items,
            appended: Vec::new(),
            sources: Vec::new(),
            facts: ConversationFacts::default(),
        }
    }

    #[test]
    fn a_reply_that_grows_is_sent_whole_once_then_as_what_it_grew_by_counted_in_utf16() {
        let mut g = Grown::default();
        let first = g.wire(&changes(vec![reply("Héat 🌡", true, 11)]));
        assert_eq!(first.items.len(), 1, "sent whole the first time");
        assert!(first.appended.is_empty());
        let next = g.wire(&changes(vec![reply("Héat 🌡 rises", true, 14)]));
        assert!(next.items.is_empty());
        assert_eq!(
            next.appended,
            vec![TextAppended {
                index: 3,
                // "Héat 🌡" is 7 UTF-16 units: the thermometer is two.
                from: 7,
                text: " rises".into(),
                last_seq: 14
            }]
        );
        let again = g.wire(&changes(vec![reply("Héat 🌡 rises.", true, 15)]));
        assert_eq!(again.appended[0].from, 13);
    }

    #[test]
    fn a_reply_that_closes_or_changes_other_than_at_its_end_is_sent_whole() {
        let mut g = Grown::default();
        g.wire(&changes(vec![reply("Heat", true, 11)]));
        let rewritten = g.wire(&changes(vec![reply("Cold", true, 12)]));
        assert_eq!(rewritten.items.len(), 1, "not a growth: sent whole");
        let narration = Item {
            narration: true,
            ..reply("Cold and more", true, 13)
        };
        assert_eq!(g.wire(&changes(vec![narration])).items.len(), 1);
        let closed = Item {
            html: Some("<p>Cold and more.</p>".into()),
            ..reply("Cold and more.", false, 14)
        };
        let sent = g.wire(&changes(vec![closed.clone()]));
        assert_eq!(sent.items, vec![closed]);
        assert!(g.sent.is_empty(), "a closed item is forgotten");
    }
}
