//! Marking insertions in a Word document's main part as tracked changes. Every edit is
//! a point insertion into the part's bytes (or a `w:t` start tag given
//! `xml:space="preserve"`), so what is not marked stays byte for byte the service's, and
//! text boxes nested inside a run are marked as independently as any paragraph.

use crate::citations::reader::marks::{ChildMarks, ParaMarks, RunMarks};
use std::ops::Range;

/// Who and when the changes are said to be by, and the ids they take.
pub(super) struct Marker<'x> {
    xml: &'x [u8],
    author: String,
    date: String,
    next_id: u64,
    edits: Vec<Edit>,
    /// The texts marked inserted, in document order, for the copy's report.
    pub inserted: Vec<String>,
    /// Text that could not be marked (a run inside an insertion already, or a part with
    /// no prefix for WordprocessingML).
    pub unmarked: usize,
}

/// Bytes put at `at`, or in place of `at..end`.
struct Edit {
    at: usize,
    end: usize,
    text: String,
}

impl<'x> Marker<'x> {
    pub(super) fn new(xml: &'x [u8], author: &str, date: &str) -> Self {
        Marker {
            xml,
            author: escape(author, true),
            date: date.to_owned(),
            next_id: largest_id(xml) + 1,
            edits: Vec::new(),
            inserted: Vec::new(),
            unmarked: 0,
        }
    }

    fn put(&mut self, at: usize, text: String) {
        self.edits.push(Edit { at, end: at, text });
    }

    /// `<w:ins …>` with the next id; `empty` for the paragraph mark's `<w:ins …/>`.
    fn ins(&mut self, w: &str, empty: bool) -> String {
        let id = self.next_id;
        self.next_id += 1;
        let close = if empty { "/>" } else { ">" };
        format!(
            r#"<{w}ins {w}id="{id}" {w}author="{}" {w}date="{}"{close}"#,
            self.author, self.date
        )
    }

    /// Marks the parts `inserted` (byte ranges of `text`, the paragraph's text as read)
    /// of paragraph `p`.
    pub(super) fn mark_inserted(&mut self, p: &ParaMarks, text: &str, inserted: &[Range<usize>]) {
        for run in &p.runs {
            self.mark_run(run, text, inserted);
        }
    }

    /// A paragraph citing added whole: its runs and its mark.
    pub(super) fn mark_new_paragraph(&mut self, p: &ParaMarks, text: &str) {
        self.mark_inserted(p, text, std::slice::from_ref(&(0..text.len())));
        let Some(w) = prefix(self.xml, &p.open) else {
            self.unmarked += 1;
            return;
        };
        let mark = self.ins(&w, true);
        match (&p.ppr, &p.mark_rpr_tag) {
            (_, Some(tag)) if self.xml[..tag.end].ends_with(b"/>") => self.edits.push(Edit {
                at: tag.start,
                end: tag.end,
                text: format!("<{w}rPr>{mark}</{w}rPr>"),
            }),
            (_, Some(tag)) => self.put(tag.end, mark),
            (Some(ppr), None) if is_empty_element(&self.xml[ppr.clone()]) => {
                self.edits.push(Edit {
                    at: ppr.start,
                    end: ppr.end,
                    text: format!("<{w}pPr><{w}rPr>{mark}</{w}rPr></{w}pPr>"),
                })
            }
            (Some(ppr), None) => {
                let end_tag =
                    (self.xml[..ppr.end].iter().rposition(|&b| b == b'<')).unwrap_or(ppr.end);
                let at = p.mark_rpr_before.unwrap_or(end_tag);
                self.put(at, format!("<{w}rPr>{mark}</{w}rPr>"));
            }
            (None, _) => {
                let at = p.open.end;
                self.put(at, format!("<{w}pPr><{w}rPr>{mark}</{w}rPr></{w}pPr>"));
            }
        }
    }

    /// A paragraph whose old text is not kept word for word in the new: the old text as
    /// one deleted run, the new as inserted.
    pub(super) fn mark_replaced(&mut self, p: &ParaMarks, text: &str, old: &str) {
        let first = p.runs.iter().find(|r| !r.in_insertion);
        let Some((run, w)) = first.and_then(|r| Some((r, prefix(self.xml, &r.open)?))) else {
            self.unmarked += 1;
            return;
        };
        let id = self.next_id;
        self.next_id += 1;
        let rpr = run.rpr.clone().map_or("", |r| as_str(&self.xml[r]));
        let deleted = format!(
            r#"<{w}del {w}id="{id}" {w}author="{}" {w}date="{}"><{w}r>{rpr}<{w}delText xml:space="preserve">{}</{w}delText></{w}r></{w}del>"#,
            self.author,
            self.date,
            escape(old, false)
        );
        self.put(run.open.start, deleted);
        self.mark_inserted(p, text, std::slice::from_ref(&(0..text.len())));
    }

    fn mark_run(&mut self, run: &RunMarks, text: &str, inserted: &[Range<usize>]) {
        let touched = (run.children.iter()).any(|c| overlaps(&c.text, inserted));
        if !touched {
            return;
        }
        // A run inside an insertion tracked already is marked by closing that one around
        // ours and opening it again; only where it holds the run directly can it be.
        let outer = match (&run.insertion_tag, run.in_insertion) {
            (Some(tag), _) => Some(Outer::of(&self.xml[tag.clone()])),
            (None, true) => Some(Outer::refused()),
            (None, false) => None,
        };
        let w = prefix(self.xml, &run.open);
        let (Some(w), false) = (w, outer.as_ref().is_some_and(Outer::is_refused)) else {
            self.unmarked += 1;
            return;
        };
        let rpr = run
            .rpr
            .clone()
            .map_or(String::new(), |r| as_str(&self.xml[r]).to_owned());
        let runs = Runs { w: &w, rpr: &rpr };
        let mut open: Option<bool> = None;
        for child in &run.children {
            if child.text.is_empty() {
                continue;
            }
            for (part, flag) in split(&child.text, inserted) {
                if flag {
                    let said = text.get(part.clone()).unwrap_or_default();
                    self.inserted.push(said.to_owned());
                }
                match open {
                    None if flag => {
                        let enter = self.enter(&w, outer.as_ref());
                        self.put(run.open.start, enter);
                    }
                    Some(was) if was != flag => {
                        let at = self.raw_offset(child, part.start - child.text.start);
                        let inside_t = child.is_t && at > self.content(child).start;
                        let (close, start) = if flag {
                            (None, Some(self.enter(&w, outer.as_ref())))
                        } else {
                            (Some(self.leave(&w, outer.as_ref())), None)
                        };
                        self.put(at, runs.switch(inside_t, close, start));
                        if inside_t {
                            self.preserve(child);
                        }
                    }
                    _ => {}
                }
                open = Some(flag);
            }
        }
        if open == Some(true) {
            let leave = self.leave(&w, outer.as_ref());
            self.put(run.end, leave);
        }
    }

    /// Starts an insertion of ours: after closing the one holding the run, if any.
    fn enter(&mut self, w: &str, outer: Option<&Outer>) -> String {
        let ins = self.ins(w, false);
        match outer {
            Some(o) => format!("</{}>{ins}", o.name),
            None => ins,
        }
    }

    /// Ends an insertion of ours: and opens the one holding the run again, with an id of
    /// its own.
    fn leave(&mut self, w: &str, outer: Option<&Outer>) -> String {
        match outer {
            Some(o) => {
                let id = self.next_id;
                self.next_id += 1;
                format!("</{w}ins>{}", o.reopened(id))
            }
            None => format!("</{w}ins>"),
        }
    }

    /// Where the byte `at` of a child's text stands in the part: in a `w:t`, past the
    /// entities before it; elsewhere (a tab, a break) at the child's start.
    fn raw_offset(&self, child: &ChildMarks, at: usize) -> usize {
        if !child.is_t || at == 0 {
            return child.span.start;
        }
        let content = self.content(child);
        let raw = &self.xml[content.clone()];
        let (mut i, mut decoded) = (0usize, 0usize);
        while i < raw.len() && decoded < at {
            if raw[i] == b'&'
                && let Some(semi) = raw[i..].iter().position(|&b| b == b';')
            {
                decoded += entity_len(&raw[i + 1..i + semi]);
                i += semi + 1;
            } else {
                decoded += 1;
                i += 1;
            }
        }
        content.start + i
    }

    /// A `w:t`'s character data, by byte of the part.
    fn content(&self, child: &ChildMarks) -> Range<usize> {
        let el = &self.xml[child.span.clone()];
        let start = el.iter().position(|&b| b == b'>').map_or(0, |i| i + 1);
        let end = el
            .iter()
            .rposition(|&b| b == b'<')
            .unwrap_or(el.len())
            .max(start);
        child.span.start + start..child.span.start + end
    }

    /// A split `w:t` keeps the spaces at its new ends.
    fn preserve(&mut self, child: &ChildMarks) {
        let content = self.content(child);
        let tag = child.span.start..content.start;
        let raw = as_str(&self.xml[tag.clone()]);
        if raw.contains("xml:space") || !raw.ends_with('>') {
            return;
        }
        if self
            .edits
            .iter()
            .any(|e| e.at == tag.start && e.end == tag.end)
        {
            return;
        }
        let text = format!("{} xml:space=\"preserve\">", &raw[..raw.len() - 1]);
        self.edits.push(Edit {
            at: tag.start,
            end: tag.end,
            text,
        });
    }

    /// The part with every edit made.
    pub(super) fn finish(mut self) -> Vec<u8> {
        // Insertions at a place go before a tag replaced there, each kind in the order made.
        self.edits.sort_by_key(|e| (e.at, e.end > e.at, e.end));
        let mut out = Vec::with_capacity(self.xml.len() + self.edits.len() * 160);
        let mut at = 0;
        for e in &self.edits {
            if e.at < at {
                continue;
            }
            out.extend_from_slice(&self.xml[at..e.at]);
            out.extend_from_slice(e.text.as_bytes());
            at = e.end;
        }
        out.extend_from_slice(&self.xml[at..]);
        out
    }
}

/// An insertion tracked already that holds a run directly: its name and start tag.
struct Outer {
    name: String,
    tag: String,
}

impl Outer {
    fn of(tag: &[u8]) -> Outer {
        let tag = as_str(tag);
        let name = (tag[1..].split(|c: char| c.is_whitespace() || c == '>' || c == '/'))
            .next()
            .unwrap_or_default();
        Outer {
            name: name.to_owned(),
            tag: tag.trim_end_matches("/>").trim_end_matches('>').to_owned() + ">",
        }
    }

    /// An insertion further up (a hyperlink between): it cannot be closed around ours.
    fn refused() -> Outer {
        Outer {
            name: String::new(),
            tag: String::new(),
        }
    }

    fn is_refused(&self) -> bool {
        self.name.is_empty()
    }

    /// The start tag again, its `id` made `id`.
    fn reopened(&self, id: u64) -> String {
        let Some(at) = self.tag.find(":id=\"") else {
            return self.tag.clone();
        };
        let from = at + ":id=\"".len();
        let to = self.tag[from..].find('"').map_or(from, |n| from + n);
        format!("{}{id}{}", &self.tag[..from], &self.tag[to..])
    }
}

/// What a run split in two is made of: its prefix and properties.
struct Runs<'a> {
    w: &'a str,
    rpr: &'a str,
}

impl Runs<'_> {
    /// Ends the run, then what `close` ends (an insertion), then what `start` starts, and
    /// opens another run with the same look; `inside_t` splits a `w:t` too.
    fn switch(&self, inside_t: bool, close: Option<String>, start: Option<String>) -> String {
        let w = self.w;
        let mut s = String::new();
        if inside_t {
            s.push_str(&format!("</{w}t>"));
        }
        s.push_str(&format!("</{w}r>"));
        s.extend(close);
        s.extend(start);
        s.push_str(&format!("<{w}r>{}", self.rpr));
        if inside_t {
            s.push_str(&format!(r#"<{w}t xml:space="preserve">"#));
        }
        s
    }
}

/// `range` cut where `inserted` begins and ends, each part with whether it is inserted.
fn split(range: &Range<usize>, inserted: &[Range<usize>]) -> Vec<(Range<usize>, bool)> {
    let mut cuts = vec![range.start, range.end];
    for r in inserted {
        for at in [r.start, r.end] {
            if at > range.start && at < range.end {
                cuts.push(at);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    (cuts.windows(2))
        .map(|w| {
            let part = w[0]..w[1];
            let flag = inserted
                .iter()
                .any(|r| r.start <= part.start && part.end <= r.end);
            (part, flag)
        })
        .collect()
}

fn overlaps(range: &Range<usize>, inserted: &[Range<usize>]) -> bool {
    (inserted.iter()).any(|r| r.start < range.end && range.start < r.end)
}

/// The prefix (with its colon) of the element whose start tag is at `tag`: `w:` for
/// `<w:r>`. `None` for an unprefixed one, whose attributes could not be given the
/// WordprocessingML namespace without one.
fn prefix(xml: &[u8], tag: &Range<usize>) -> Option<String> {
    let name = &xml[tag.start + 1..tag.end];
    let end = (name.iter())
        .position(|&b| b.is_ascii_whitespace() || b == b'>' || b == b'/')
        .unwrap_or(name.len());
    let name = as_str(&name[..end]);
    let (prefix, _) = name.split_once(':')?;
    Some(format!("{prefix}:"))
}

fn is_empty_element(el: &[u8]) -> bool {
    el.ends_with(b"/>") && el.iter().filter(|&&b| b == b'>').count() == 1
}

fn as_str(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or("")
}

/// How many bytes an entity reference's name (between `&` and `;`) stands for, as the
/// reader decodes it: the predefined five and character references; others, nothing.
fn entity_len(name: &[u8]) -> usize {
    let c = match name {
        b"lt" => Some('<'),
        b"gt" => Some('>'),
        b"amp" => Some('&'),
        b"apos" => Some('\''),
        b"quot" => Some('"'),
        [b'#', b'x' | b'X', hex @ ..] => {
            (u32::from_str_radix(as_str(hex), 16).ok()).and_then(char::from_u32)
        }
        [b'#', dec @ ..] => as_str(dec).parse().ok().and_then(char::from_u32),
        _ => None,
    };
    c.map_or(0, char::len_utf8)
}

/// `s` as XML character data (`attribute`: as an attribute's value, quotes escaped too).
pub(super) fn escape(s: &str, attribute: bool) -> String {
    if attribute {
        quick_xml::escape::escape(s).into_owned()
    } else {
        quick_xml::escape::partial_escape(s).into_owned()
    }
}

/// The largest number any `…:id="N"` in the part holds, so new change ids are unique.
fn largest_id(xml: &[u8]) -> u64 {
    let needle = b":id=\"";
    let mut best = 0u64;
    let mut i = 0;
    while let Some(at) = xml[i..].windows(needle.len()).position(|w| w == needle) {
        let from = i + at + needle.len();
        let digits = xml[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if let Ok(n) = as_str(&xml[from..from + digits]).parse::<u64>() {
            best = best.max(n);
        }
        i = from;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_cut_where_insertions_begin_and_end() {
        assert_eq!(
            split(&(10..20), &[12..15, 18..30]),
            vec![
                (10..12, false),
                (12..15, true),
                (15..18, false),
                (18..20, true)
            ]
        );
        let after = 5..9;
        assert_eq!(
            split(&(0..5), std::slice::from_ref(&after)),
            vec![(0..5, false)]
        );
    }

    #[test]
    fn an_insertion_tracked_already_is_opened_again_with_an_id_of_its_own() {
        let o = Outer::of(br#"<w:ins w:id="3" w:author="Ann" w:date="2020-01-01T00:00:00Z">"#);
        assert_eq!(o.name, "w:ins");
        assert_eq!(
            o.reopened(41),
            r#"<w:ins w:id="41" w:author="Ann" w:date="2020-01-01T00:00:00Z">"#
        );
    }

    #[test]
    fn ids_start_past_every_id_the_part_has() {
        let xml = br#"<w:bookmarkStart w:id="7"/><w:ins w:id="12"/><x:id="a"/>"#;
        assert_eq!(largest_id(xml), 12);
        assert_eq!(largest_id(b"<w:p/>"), 0);
    }

    #[test]
    fn entities_count_as_what_they_stand_for() {
        assert_eq!(entity_len(b"amp"), 1);
        assert_eq!(entity_len(b"#x2014"), 3);
        assert_eq!(entity_len(b"#8212"), 3);
        assert_eq!(entity_len(b"nbsp"), 0);
        assert_eq!(escape(r#"a<b & "c""#, true), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(escape(r#"a<b & "c""#, false), r#"a&lt;b &amp; "c""#);
    }
}
