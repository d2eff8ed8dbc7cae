//! What a window is sent of each batch's changes. A streaming reply changes with every
//! delta, and sent whole each time it was most of what crossed to the window: at 1,000
//! records a second a 300,000-character report went over 25 times a second, to be
//! parsed and thrown away. An open item that only grew by text is sent as what it grew
//! by, from the length the window holds, and one that then closes is sent without the
//! text the window holds; anything else is sent whole, as before.

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

/// An open item that closed, as the text it was sent with and what it grew by last, and
/// what closing it made. A long reply's text was most of the message that closed it, and
/// a window that parsed it kept the memory that took (docs/performance.md).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct TextClosed {
    pub index: u32,
    /// As [`TextAppended`]'s.
    pub from: u32,
    /// What the text grew by since it was last sent (often nothing).
    pub text: String,
    pub narration: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub html: Option<String>,
    pub html_blocks: Vec<u32>,
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
    /// `changes` as sent to windows: items that only grew by text as [`TextAppended`],
    /// and those that then closed as [`TextClosed`].
    pub fn wire(&mut self, changes: &ConversationChanges) -> ConversationChanges {
        let mut items = Vec::new();
        let mut appended = Vec::new();
        let mut closed = Vec::new();
        for item in &changes.items {
            let len = match self.growth(item) {
                Some((from, grew)) => {
                    let len = from.saturating_add(utf16_len(grew));
                    if item.open {
                        appended.push(TextAppended {
                            index: item.index,
                            from,
                            text: grew.to_owned(),
                            last_seq: item.last_seq,
                        });
                    } else {
                        closed.push(TextClosed {
                            index: item.index,
                            from,
                            text: grew.to_owned(),
                            narration: item.narration,
                            html: item.html.clone(),
                            html_blocks: item.html_blocks.clone(),
                            last_seq: item.last_seq,
                        });
                    }
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
            closed,
            sources: changes.sources.clone(),
            facts: changes.facts.clone(),
        }
    }

    /// The length sent and what `item`'s text grew by since, when that growth is all that
    /// changed, or (once it closes) that and what closing it makes.
    fn growth<'a>(&self, item: &'a Item) -> Option<(u32, &'a str)> {
        let (before, len) = self.sent.get(&item.index)?;
        let grew = item.text.strip_prefix(before.text.as_str())?;
        same_but_text(item, before).then_some((*len, grew))
    }
}

/// Whether `a` (as it is now) differs from `b` (as last sent, open) only in its text and
/// the record it was last changed by, or, closed now, in what closing it makes. Every
/// field is named, so a field added to [`Item`] must be placed here.
fn same_but_text(a: &Item, b: &Item) -> bool {
    let Item {
        index,
        kind,
        text: _,
        open,
        narration,
        html,
        html_blocks,
        step,
        request,
        sign_in,
        files,
        mission,
        first_seq,
        last_seq: _,
    } = a;
    let unchanged = (
        index, kind, step, request, sign_in, files, mission, first_seq,
    ) == (
        &b.index,
        &b.kind,
        &b.step,
        &b.request,
        &b.sign_in,
        &b.files,
        &b.mission,
        &b.first_seq,
    );
    let still_open =
        *open && (narration, html, html_blocks) == (&b.narration, &b.html, &b.html_blocks);
    unchanged && (still_open || !*open)
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
            open,
            last_seq,
            ..Item::new(3, ItemKind::Assistant, text.into(), 10)
        }
    }

    fn changes(items: Vec<Item>) -> ConversationChanges {
        ConversationChanges {
            items,
            appended: Vec::new(),
            closed: Vec::new(),
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
    fn a_reply_that_changes_other_than_at_its_end_is_sent_whole() {
        let mut g = Grown::default();
        g.wire(&changes(vec![reply("Heat", true, 11)]));
        let rewritten = g.wire(&changes(vec![reply("Cold", true, 12)]));
        assert_eq!(rewritten.items.len(), 1, "not a growth: sent whole");
        let narration = Item {
            narration: true,
            ..reply("Cold and more", true, 13)
        };
        assert_eq!(g.wire(&changes(vec![narration])).items.len(), 1);
        // Closed with other text than it grew to: whole too, and forgotten.
        let closed = Item {
            html: Some("<p>Warm.</p>".into()),
            html_blocks: vec![0],
            ..reply("Warm.", false, 14)
        };
        let sent = g.wire(&changes(vec![closed.clone()]));
        assert_eq!(sent.items, vec![closed]);
        assert!(sent.closed.is_empty());
        assert!(g.sent.is_empty(), "a closed item is forgotten");
    }

    #[test]
    fn a_reply_that_closes_as_it_grew_is_sent_without_its_text() {
        let mut g = Grown::default();
        g.wire(&changes(vec![reply("Héat 🌡", true, 11)]));
        g.wire(&changes(vec![reply("Héat 🌡 rises", true, 12)]));
        let closed = Item {
            narration: true,
            html: Some("<p>Héat 🌡 rises.</p>\n".into()),
            html_blocks: vec![0],
            ..reply("Héat 🌡 rises.", false, 14)
        };
        let sent = g.wire(&changes(vec![closed]));
        assert!(sent.items.is_empty() && sent.appended.is_empty());
        assert_eq!(
            sent.closed,
            vec![TextClosed {
                index: 3,
                from: 13,
                text: ".".into(),
                narration: true,
                html: Some("<p>Héat 🌡 rises.</p>\n".into()),
                html_blocks: vec![0],
                last_seq: 14,
            }]
        );
        assert!(g.sent.is_empty(), "a closed item is forgotten");
        // An item never sent open is sent whole when it closes.
        let other = Item {
            index: 4,
            ..reply("Done.", false, 15)
        };
        assert_eq!(g.wire(&changes(vec![other.clone()])).items, vec![other]);
    }
}
