//! Plain-text essays: one paragraph per non-blank line. A line reading
//! "References" (or "Bibliography", "Works Cited", "Sources") starts the reference list.

use super::style::{insertions, prepare};
use super::{
    CiteOptions, CiteStats, Kind, MIN_CITABLE_CHARS, Parsed, is_references_heading, stats,
};

struct Line<'a> {
    /// Byte range of the content, without the line terminator.
    start: usize,
    end: usize,
    /// Byte offset after the terminator.
    next: usize,
    text: &'a str,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let nl = text[pos..].find('\n').map(|i| pos + i);
        let (end, next) = match nl {
            Some(i) => (i, i + 1),
            None => (text.len(), text.len()),
        };
        let end = if text[pos..end].ends_with('\r') {
            end - 1
        } else {
            end
        };
        out.push(Line {
            start: pos,
            end,
            next,
            text: &text[pos..end],
        });
        pos = next;
    }
    out
}

fn is_markdown_heading(line: &str) -> bool {
    line.trim_start().starts_with('#')
}

fn heading_text(line: &str) -> &str {
    line.trim().trim_start_matches('#').trim()
}

enum Role {
    Blank,
    Body,
    Heading,
    RefsHeading,
    RefEntry,
}

fn roles(ls: &[Line<'_>]) -> Vec<Role> {
    let refs_at = ls
        .iter()
        .rposition(|l| is_references_heading(heading_text(l.text)));
    let mut in_refs = false;
    ls.iter()
        .enumerate()
        .map(|(i, l)| {
            if Some(i) == refs_at {
                in_refs = true;
                return Role::RefsHeading;
            }
            if l.text.trim().is_empty() {
                return Role::Blank;
            }
            if is_markdown_heading(l.text) {
                in_refs = false;
                return Role::Heading;
            }
            if in_refs { Role::RefEntry } else { Role::Body }
        })
        .collect()
}

pub(crate) fn parse(text: &str) -> Parsed {
    let ls = lines(text);
    let mut parsed = Parsed::new(Kind::Text);
    for (l, role) in ls.iter().zip(roles(&ls)) {
        match role {
            Role::Blank => {}
            Role::Body | Role::Heading => {
                let style = matches!(role, Role::Heading).then(|| "Heading".to_owned());
                parsed.body(l.text.trim().to_owned(), None, style);
            }
            Role::RefsHeading => parsed.references_heading = Some(heading_text(l.text).to_owned()),
            Role::RefEntry => parsed.reference(l.text),
        }
    }
    parsed
}

pub(crate) fn cite(text: &str, opts: &CiteOptions) -> (String, CiteStats) {
    let ls = lines(text);
    let rs = roles(&ls);
    let eligible: Vec<bool> = ls
        .iter()
        .zip(&rs)
        .map(|(l, r)| matches!(r, Role::Body) && l.text.trim().chars().count() >= MIN_CITABLE_CHARS)
        .collect();
    let existing: Vec<String> = ls
        .iter()
        .zip(&rs)
        .filter(|(_, r)| matches!(r, Role::RefEntry))
        .map(|(l, _)| l.text.to_owned())
        .collect();
    let cites = prepare(&eligible, &existing, opts);
    let chosen = &cites.plan;
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };

    let mut inserts: Vec<(usize, String)> = Vec::new();
    for (i, (l, works)) in ls.iter().zip(chosen).enumerate() {
        for (a, citation) in insertions(l.text, works, &cites, opts, i as u64) {
            let at = l
                .text
                .char_indices()
                .nth(a.split())
                .map_or(l.end, |(b, _)| l.start + b);
            inserts.push((at, citation));
        }
    }

    let refs = &cites.refs;
    if !refs.is_empty() {
        let last = ls
            .iter()
            .zip(&rs)
            .rposition(|(_, r)| matches!(r, Role::RefsHeading | Role::RefEntry));
        match last {
            Some(i) => {
                let l = &ls[i];
                let block = if l.next > l.end {
                    refs.iter().map(|r| format!("{r}{nl}")).collect::<String>()
                } else {
                    refs.iter().map(|r| format!("{nl}{r}")).collect::<String>()
                };
                inserts.push((l.next, block));
            }
            None => {
                let sep = if text.trim().is_empty() || text.ends_with(&format!("{nl}{nl}")) {
                    String::new()
                } else if text.ends_with('\n') {
                    nl.to_owned()
                } else {
                    format!("{nl}{nl}")
                };
                let tail = if text.ends_with('\n') { nl } else { "" };
                inserts.push((
                    text.len(),
                    format!("{sep}References{nl}{}{tail}", refs.join(nl)),
                ));
            }
        }
    }

    inserts.sort_by_key(|(at, _)| *at);
    let mut out =
        String::with_capacity(text.len() + inserts.iter().map(|(_, s)| s.len()).sum::<usize>());
    let mut pos = 0;
    for (at, s) in inserts {
        out.push_str(&text[pos..at]);
        out.push_str(&s);
        pos = at;
    }
    out.push_str(&text[pos..]);
    (out, stats(chosen, refs.len()))
}
