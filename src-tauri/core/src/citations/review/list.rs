//! The insertions of a cite as a list a writer works through: where each citation went,
//! the sentence it sits in, the citation, and the references added. Built from the
//! summary alone, so it stands in for tracked changes where there are none (PowerPoint,
//! plain text).

use crate::citations::summary::CiteSummary;
use serde::Serialize;
use ts_rs::TS;

/// The longest sentence shown around a citation, in characters, each side cut at a word.
const MAX_SENTENCE_CHARS: usize = 400;

/// One citation inserted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct ReviewEntry {
    /// Where, as people count: "Paragraph 3", "Slide 2", "Slide 2, notes".
    pub place: String,
    /// The paragraph's index in the document (from 0), as the summary has it.
    pub paragraph: u32,
    pub slide: Option<u32>,
    pub notes: bool,
    /// The sentence the citation sits in, as the cited document reads.
    pub sentence: String,
    /// What was inserted, trimmed.
    pub citation: String,
}

/// Every citation inserted, in document order, and the References entries added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct ReviewList {
    pub entries: Vec<ReviewEntry>,
    pub new_references: Vec<String>,
}

/// The list of what `summary` says citing inserted.
pub fn review_list(summary: &CiteSummary) -> ReviewList {
    let mut entries = Vec::new();
    for change in &summary.changes {
        let text: String = change.after.iter().map(|s| s.text.as_str()).collect();
        let place = match (change.slide, change.notes) {
            (Some(n), true) => format!("Slide {n}, notes"),
            (Some(n), false) => format!("Slide {n}"),
            (None, _) => format!("Paragraph {}", change.index + 1),
        };
        let mut at = 0;
        for s in &change.after {
            let range = at..at + s.text.len();
            at = range.end;
            if !s.inserted || s.text.trim().is_empty() {
                continue;
            }
            entries.push(ReviewEntry {
                place: place.clone(),
                paragraph: change.index,
                slide: change.slide,
                notes: change.notes,
                sentence: sentence_around(&text, range),
                citation: s.text.trim().to_owned(),
            });
        }
    }
    ReviewList {
        entries,
        new_references: summary.new_references.clone(),
    }
}

/// The sentence of `text` that `at` sits in: from the end of the sentence before (a
/// full stop, question or exclamation mark and a space, a line's end) to the end of its
/// own. A citation right after a full stop belongs to the sentence it follows.
fn sentence_around(text: &str, at: std::ops::Range<usize>) -> String {
    let head = text[..at.start].trim_end();
    let head_body = &head[..head.len() - head.chars().next_back().map_or(0, char::len_utf8)];
    let start = ends_of_sentences(head_body).last().copied().unwrap_or(0);
    let tail = &text[at.end..];
    let end = if head.ends_with(['.', '!', '?']) {
        at.end
    } else {
        ends_of_sentences(tail)
            .first()
            .map_or(text.len(), |&e| at.end + e)
    };
    let sentence = text[start..end].trim();
    cut(sentence, MAX_SENTENCE_CHARS)
}

/// Where each sentence in `s` ends: just past a terminal mark followed by white space or
/// the end, or past a line break.
fn ends_of_sentences(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let ends = match c {
            '.' | '!' | '?' => next.is_none_or(char::is_whitespace),
            '\n' => true,
            _ => false,
        };
        if ends {
            out.push(i + c.len_utf8());
        }
    }
    out
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let head: String = s.chars().take(max).collect();
    let at = head.rfind(' ').unwrap_or(head.len());
    format!("{}…", &head[..at])
}

impl ReviewList {
    /// As Markdown: a table of the citations, then the references added.
    pub fn markdown(&self, title: &str) -> String {
        let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        let mut out = format!("# Citations inserted in {}\n\n", cell(title));
        if self.entries.is_empty() {
            out.push_str("No citations were inserted.\n");
        } else {
            out.push_str("| Where | Citation | In the sentence |\n|---|---|---|\n");
            for e in &self.entries {
                out.push_str(&format!(
                    "| {} | {} | {} |\n",
                    cell(&e.place),
                    cell(&e.citation),
                    cell(&e.sentence)
                ));
            }
        }
        if !self.new_references.is_empty() {
            out.push_str("\n## References added\n\n");
            for (i, r) in self.new_references.iter().enumerate() {
                out.push_str(&format!("{}. {}\n", i + 1, r.replace('\n', " ")));
            }
        }
        out
    }

    /// As CSV (RFC 4180): one row a citation, then one a reference added.
    pub fn csv(&self) -> String {
        let field = |s: &str| {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_owned()
            }
        };
        let mut out = String::from("kind,where,paragraph,slide,notes,citation,sentence\r\n");
        for e in &self.entries {
            let slide = e.slide.map(|n| n.to_string()).unwrap_or_default();
            out.push_str(&format!(
                "citation,{},{},{slide},{},{},{}\r\n",
                field(&e.place),
                e.paragraph + 1,
                e.notes,
                field(&e.citation),
                field(&e.sentence)
            ));
        }
        for r in &self.new_references {
            out.push_str(&format!("reference,References,,,false,{},\r\n", field(r)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, citation: &str) -> String {
        let start = text.find(citation).unwrap();
        sentence_around(text, start..start + citation.len())
    }

    #[test]
    fn a_citation_is_shown_in_its_sentence() {
        let t = "Heat kills. Cities are hotter (Smith, 2020) than fields. Night brings no relief.";
        assert_eq!(
            at(t, " (Smith, 2020)"),
            "Cities are hotter (Smith, 2020) than fields."
        );
        let t = "Heat kills. Cities are hotter than fields. (Smith, 2020) Night brings no relief.";
        assert_eq!(
            at(t, " (Smith, 2020)"),
            "Cities are hotter than fields. (Smith, 2020)"
        );
        assert_eq!(at("One claim [3]", " [3]"), "One claim [3]");
        assert_eq!(
            at("Dr. Who said so (Ng, 2001).", " (Ng, 2001)"),
            "Who said so (Ng, 2001)."
        );
    }

    #[test]
    fn csv_fields_are_quoted_where_they_must_be() {
        let list = ReviewList {
            entries: vec![ReviewEntry {
                place: "Slide 2, notes".into(),
                paragraph: 4,
                slide: Some(2),
                notes: true,
                sentence: "He said \"hot\", twice (A, 2020).".into(),
                citation: "(A, 2020)".into(),
            }],
            new_references: vec!["A, B. (2020). Heat, again.".into()],
        };
        assert_eq!(
            list.csv(),
            "kind,where,paragraph,slide,notes,citation,sentence\r\n\
             citation,\"Slide 2, notes\",5,2,true,\"(A, 2020)\",\"He said \"\"hot\"\", twice (A, 2020).\"\r\n\
             reference,References,,,false,\"A, B. (2020). Heat, again.\",\r\n"
        );
        let md = list.markdown("deck.pptx");
        assert!(md.contains("| Slide 2, notes | (A, 2020) |"), "{md}");
        assert!(md.contains("1. A, B. (2020). Heat, again."), "{md}");
    }
}
