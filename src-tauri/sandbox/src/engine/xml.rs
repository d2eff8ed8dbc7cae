//! A read-only XML tree that remembers where every element sits in the source.
//!
//! Parts are never re-serialised: the engine finds byte offsets here and splices
//! new markup into the original text, so everything it does not touch stays
//! byte-identical. quick-xml never expands DTDs or external entities; unknown
//! entity references are simply dropped from decoded text.

use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;

use super::EngineError;

/// The namespaces the engine cares about; strict-OOXML URIs map to the same value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ns {
    W,
    A,
    P,
    R,
    Mc,
    Rel,
    Ct,
    Xmlns,
    None,
    Other,
}

fn ns_of(uri: &[u8]) -> Ns {
    match uri {
        b"http://schemas.openxmlformats.org/wordprocessingml/2006/main"
        | b"http://purl.oclc.org/ooxml/wordprocessingml/main" => Ns::W,
        b"http://schemas.openxmlformats.org/drawingml/2006/main"
        | b"http://purl.oclc.org/ooxml/drawingml/main" => Ns::A,
        b"http://schemas.openxmlformats.org/presentationml/2006/main"
        | b"http://purl.oclc.org/ooxml/presentationml/main" => Ns::P,
        b"http://schemas.openxmlformats.org/officeDocument/2006/relationships"
        | b"http://purl.oclc.org/ooxml/officeDocument/relationships" => Ns::R,
        b"http://schemas.openxmlformats.org/markup-compatibility/2006" => Ns::Mc,
        b"http://schemas.openxmlformats.org/package/2006/relationships" => Ns::Rel,
        b"http://schemas.openxmlformats.org/package/2006/content-types" => Ns::Ct,
        _ => Ns::Other,
    }
}

fn resolved(r: &ResolveResult<'_>) -> Ns {
    match r {
        ResolveResult::Bound(ns) => ns_of(ns.as_ref()),
        ResolveResult::Unbound => Ns::None,
        ResolveResult::Unknown(_) => Ns::Other,
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Attr {
    pub ns: Ns,
    pub qname: String,
    pub local: String,
    pub value: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Elem {
    pub ns: Ns,
    pub qname: String,
    pub local: String,
    pub attrs: Vec<Attr>,
    /// Offset of `<` of the start tag.
    pub start: usize,
    /// Offset just after the start tag's `>`.
    pub start_end: usize,
    /// Offset of the end tag's `<` (equal to `start_end` for `<x/>`).
    pub end_start: usize,
    /// Offset just after the element.
    pub end: usize,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
}

impl Elem {
    pub fn is(&self, ns: Ns, local: &str) -> bool {
        self.ns == ns && self.local == local
    }

    pub fn attr(&self, ns: Ns, local: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.ns == ns && a.local == local)
            .map(|a| a.value.as_str())
    }

    /// The prefix (with its colon) this element was written with, e.g. `"w:"`.
    pub fn prefix(&self) -> &str {
        match self.qname.find(':') {
            Some(i) => &self.qname[..=i],
            None => "",
        }
    }
}

/// Elements are stored in document order, so a parent always precedes its children.
pub(crate) struct Tree<'a> {
    pub src: &'a str,
    pub elems: Vec<Elem>,
}

fn corrupt(part: &str, e: impl std::fmt::Display) -> EngineError {
    EngineError::Corrupt(format!("The part {part} is not well-formed XML ({e})."))
}

impl<'a> Tree<'a> {
    pub fn parse(src: &'a str, part: &str) -> Result<Self, EngineError> {
        // quick-xml skips a BOM without counting it in its positions, so parse
        // past it and shift the offsets back.
        let base = if src.starts_with('\u{FEFF}') { 3 } else { 0 };
        let mut reader = NsReader::from_str(&src[base..]);
        let mut elems: Vec<Elem> = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        loop {
            let before = base + reader.buffer_position() as usize;
            let event = reader.read_event().map_err(|e| corrupt(part, e))?;
            let after = base + reader.buffer_position() as usize;
            match event {
                Event::Start(ref e) | Event::Empty(ref e) => {
                    let empty = matches!(event, Event::Empty(_));
                    let (rr, local) = reader.resolver().resolve_element(e.name());
                    let ns = resolved(&rr);
                    let local = String::from_utf8_lossy(local.as_ref()).into_owned();
                    let qname = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                    let mut attrs = Vec::new();
                    for a in e.attributes() {
                        let a = a.map_err(|e| corrupt(part, e))?;
                        let key = a.key;
                        let aq = String::from_utf8_lossy(key.as_ref()).into_owned();
                        let (ans, alocal) = if key.as_namespace_binding().is_some() {
                            (Ns::Xmlns, aq.split(':').nth(1).unwrap_or("").to_owned())
                        } else {
                            let (rr, l) = reader.resolver().resolve_attribute(key);
                            (
                                resolved(&rr),
                                String::from_utf8_lossy(l.as_ref()).into_owned(),
                            )
                        };
                        let raw = String::from_utf8_lossy(&a.value);
                        attrs.push(Attr {
                            ns: ans,
                            qname: aq,
                            local: alocal,
                            value: decode(&raw).0,
                        });
                    }
                    let idx = elems.len();
                    let parent = stack.last().copied();
                    if let Some(p) = parent {
                        elems[p].children.push(idx);
                    } else if elems.iter().any(|e| e.parent.is_none()) {
                        return Err(corrupt(part, "more than one root element"));
                    }
                    elems.push(Elem {
                        ns,
                        qname,
                        local,
                        attrs,
                        start: before,
                        start_end: after,
                        end_start: after,
                        end: after,
                        parent,
                        children: Vec::new(),
                    });
                    if !empty {
                        stack.push(idx);
                    }
                }
                Event::End(_) => {
                    let idx = stack
                        .pop()
                        .ok_or_else(|| corrupt(part, "unexpected end tag"))?;
                    elems[idx].end_start = before;
                    elems[idx].end = after;
                }
                Event::Eof => break,
                _ => {}
            }
        }
        if !stack.is_empty() {
            return Err(corrupt(part, "unclosed element at end of part"));
        }
        if elems.is_empty() {
            return Err(corrupt(part, "no root element"));
        }
        Ok(Tree { src, elems })
    }

    pub fn root(&self) -> usize {
        0
    }

    pub fn child(&self, of: usize, ns: Ns, local: &str) -> Option<usize> {
        self.elems[of]
            .children
            .iter()
            .copied()
            .find(|&c| self.elems[c].is(ns, local))
    }

    pub fn children_named<'s>(
        &'s self,
        of: usize,
        ns: Ns,
        local: &'s str,
    ) -> impl Iterator<Item = usize> + 's {
        self.elems[of]
            .children
            .iter()
            .copied()
            .filter(move |&c| self.elems[c].is(ns, local))
    }

    /// Every element below `of` (not `of` itself), in document order.
    pub fn descendants(&self, of: usize) -> impl Iterator<Item = usize> + '_ {
        let end = self.elems[of].end;
        (of + 1..self.elems.len()).take_while(move |&i| self.elems[i].start < end)
    }

    pub fn ancestors(&self, of: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.elems[of].parent, move |&i| self.elems[i].parent)
    }

    pub fn is_within(&self, elem: usize, ancestor: usize) -> bool {
        let a = &self.elems[ancestor];
        let e = &self.elems[elem];
        elem != ancestor && e.start >= a.start && e.end <= a.end
    }

    pub fn raw(&self, elem: usize) -> &'a str {
        let e = &self.elems[elem];
        &self.src[e.start..e.end]
    }

    pub fn start_tag(&self, elem: usize) -> &'a str {
        let e = &self.elems[elem];
        &self.src[e.start..e.start_end]
    }

    pub fn inner(&self, elem: usize) -> &'a str {
        let e = &self.elems[elem];
        &self.src[e.start_end..e.end_start]
    }

    /// The element's markup with the listed descendants cut out, for copying
    /// properties without dragging revision marks or section breaks along.
    pub fn raw_without(&self, elem: usize, drop: impl Fn(&Elem) -> bool) -> String {
        let e = &self.elems[elem];
        let mut out = String::new();
        let mut pos = e.start;
        let mut skip_until = 0;
        for d in self.descendants(elem) {
            let de = &self.elems[d];
            if de.start < skip_until {
                continue;
            }
            if drop(de) {
                out.push_str(&self.src[pos..de.start]);
                pos = de.end;
                skip_until = de.end;
            }
        }
        out.push_str(&self.src[pos..e.end]);
        // `<x a="1"></x>` left empty reads better as `<x a="1"/>`.
        let tag_len = e.start_end - e.start;
        if e.start_end != e.end && out.len() > tag_len && out[tag_len..].starts_with("</") {
            let mut short = out[..tag_len - 1].trim_end().to_owned();
            short.push_str("/>");
            return short;
        }
        out
    }

    /// The prefix (with colon) bound to `uri` on `elem` or an ancestor, if any.
    pub fn prefix_for(&self, elem: usize, ns: Ns) -> Option<String> {
        std::iter::once(elem)
            .chain(self.ancestors(elem))
            .flat_map(|i| self.elems[i].attrs.iter())
            .find(|a| a.ns == Ns::Xmlns && !a.local.is_empty() && ns_of(a.value.as_bytes()) == ns)
            .map(|a| format!("{}:", a.local))
    }
}

/// Element `elem`'s character data as read: the text, its length in characters, each
/// character's byte offset in the part ([`decode`]'s, moved to where the element stands),
/// and whether it can be split there (it holds no markup).
pub(crate) struct TextAt {
    pub text: String,
    pub len: usize,
    pub offs: Vec<usize>,
    pub splittable: bool,
}

impl TextAt {
    pub fn read(tree: &Tree<'_>, elem: usize) -> TextAt {
        let inner = tree.inner(elem);
        let (text, rel) = decode(inner);
        let base = tree.elems[elem].start_end;
        TextAt {
            len: text.chars().count(),
            text,
            offs: rel.into_iter().map(|o| base + o).collect(),
            splittable: !inner.contains('<'),
        }
    }

    /// Appends the text to a paragraph's `text`, counting its characters in `chars`.
    pub fn append(&self, text: &mut String, chars: &mut usize) {
        text.push_str(&self.text);
        *chars += self.len;
    }
}

/// Decodes XML character data, returning the text and, for each decoded char,
/// the byte offset in `raw` where it starts (plus one final entry for the end).
/// Split points are only ever taken from these offsets, so they never fall
/// inside an entity reference.
pub(crate) fn decode(raw: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(raw.len());
    let mut offs = Vec::with_capacity(raw.len() + 1);
    let b = raw.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'&' => {
                let Some(semi) = raw[i..].find(';') else {
                    push_str(&mut out, &mut offs, &raw[i..], i);
                    break;
                };
                let name = &raw[i + 1..i + semi];
                let ch = match name {
                    "amp" => Some('&'),
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "quot" => Some('"'),
                    "apos" => Some('\''),
                    _ if name.starts_with("#x") || name.starts_with("#X") => {
                        u32::from_str_radix(&name[2..], 16)
                            .ok()
                            .and_then(char::from_u32)
                    }
                    _ if name.starts_with('#') => {
                        name[1..].parse::<u32>().ok().and_then(char::from_u32)
                    }
                    // An entity declared in a DTD: deliberately never expanded.
                    _ => None,
                };
                if let Some(c) = ch {
                    out.push(c);
                    offs.push(i);
                }
                i += semi + 1;
            }
            b'<' => {
                let rest = &raw[i..];
                if let Some(body) = rest.strip_prefix("<![CDATA[") {
                    let len = body.find("]]>").unwrap_or(body.len());
                    push_str(&mut out, &mut offs, &body[..len], i + 9);
                    i += 9 + len + 3;
                } else if rest.starts_with("<!--") {
                    i += rest.find("-->").map_or(rest.len(), |n| n + 3);
                } else {
                    i += rest.find('>').map_or(rest.len(), |n| n + 1);
                }
            }
            _ => {
                let next = raw[i..].find(['&', '<']).map_or(raw.len(), |n| i + n);
                push_str(&mut out, &mut offs, &raw[i..next], i);
                i = next;
            }
        }
    }
    offs.push(raw.len());
    (out, offs)
}

fn push_str(out: &mut String, offs: &mut Vec<usize>, s: &str, base: usize) {
    for (j, c) in s.char_indices() {
        out.push(c);
        offs.push(base + j);
    }
}

pub(crate) fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

pub(crate) fn escape_attr(s: &str) -> String {
    escape_text(s).replace('"', "&quot;")
}

/// A replacement of `src[at..end]` (an insertion when `at == end`).
#[derive(Debug, Clone)]
pub(crate) struct Edit {
    pub at: usize,
    pub end: usize,
    pub text: String,
}

impl Edit {
    pub fn insert(at: usize, text: impl Into<String>) -> Self {
        Edit {
            at,
            end: at,
            text: text.into(),
        }
    }

    pub fn replace(at: usize, end: usize, text: impl Into<String>) -> Self {
        Edit {
            at,
            end,
            text: text.into(),
        }
    }
}

/// Applies edits; insertions at the same offset keep the order they were made in.
pub(crate) fn apply(src: &str, mut edits: Vec<Edit>) -> Result<String, EngineError> {
    edits.sort_by_key(|e| (e.at, e.end));
    let mut out =
        String::with_capacity(src.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    // Two citations split out of one `w:t` each ask for the same `xml:space` fix to its
    // start tag: one is enough.
    edits.dedup_by(|b, a| a.at < a.end && (a.at, a.end, &a.text) == (b.at, b.end, &b.text));
    let mut pos = 0;
    for e in edits {
        if e.at < pos {
            return Err(EngineError::Unsupported(
                "The document's layout could not be edited safely.".into(),
            ));
        }
        out.push_str(&src[pos..e.at]);
        out.push_str(&e.text);
        pos = e.end;
    }
    out.push_str(&src[pos..]);
    Ok(out)
}

/// Parses `xml` to the end, for checking output.
#[cfg(test)]
pub(crate) fn well_formed(xml: &str) -> Result<(), String> {
    Tree::parse(xml, "test")
        .map(|_| ())
        .map_err(|e| e.to_string())
}
