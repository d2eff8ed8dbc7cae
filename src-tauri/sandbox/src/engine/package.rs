//! The OPC (ZIP) container: bounded reads, and rewriting with untouched entries
//! copied raw so they stay byte-for-byte what the user uploaded.

use std::collections::HashMap;
use std::io::{Cursor, Read, Write};

use zip::ZipArchive;
use zip::write::{SimpleFileOptions, ZipWriter};

use super::EngineError;
use super::xml::{Ns, Tree};

/// A zip bomb must not take the service down: no single part may unpack beyond this.
pub(crate) const MAX_PART: u64 = 64 * 1024 * 1024;

pub(crate) struct Package<'b> {
    bytes: &'b [u8],
    archive: ZipArchive<Cursor<&'b [u8]>>,
    names: Vec<String>,
    limit: u64,
}

fn zip_err(e: zip::result::ZipError) -> EngineError {
    EngineError::Corrupt(format!("The file is a damaged ZIP package ({e})."))
}

impl<'b> Package<'b> {
    pub fn open(bytes: &'b [u8]) -> Result<Self, EngineError> {
        Self::open_with_limit(bytes, MAX_PART)
    }

    pub fn open_with_limit(bytes: &'b [u8], limit: u64) -> Result<Self, EngineError> {
        let archive = ZipArchive::new(Cursor::new(bytes)).map_err(zip_err)?;
        let names = (0..archive.len())
            .map(|i| archive.name_for_index(i).unwrap_or_default().to_owned())
            .collect();
        Ok(Package {
            bytes,
            archive,
            names,
            limit,
        })
    }

    /// The package exactly as uploaded, for when nothing needed changing.
    pub fn original(&self) -> &'b [u8] {
        self.bytes
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Part names are case-insensitive in OPC and written with a leading slash
    /// in content types and absolute targets; ZIP entry names have neither rule.
    pub fn find(&self, part: &str) -> Option<usize> {
        let part = part.trim_start_matches('/');
        self.names
            .iter()
            .position(|n| n == part)
            .or_else(|| self.names.iter().position(|n| n.eq_ignore_ascii_case(part)))
    }

    pub fn read_index(&mut self, idx: usize) -> Result<Vec<u8>, EngineError> {
        let name = self.names[idx].clone();
        let limit = self.limit;
        let file = self.archive.by_index(idx).map_err(zip_err)?;
        if file.size() > limit {
            return Err(too_large(&name, limit));
        }
        // The declared size can lie; the cap on reading is what protects us.
        let mut out = Vec::with_capacity(file.size() as usize);
        file.take(limit + 1).read_to_end(&mut out).map_err(|e| {
            EngineError::Corrupt(format!("The part {name} could not be unpacked ({e})."))
        })?;
        if out.len() as u64 > limit {
            return Err(too_large(&name, limit));
        }
        Ok(out)
    }

    pub fn read(&mut self, part: &str) -> Result<Option<Vec<u8>>, EngineError> {
        match self.find(part) {
            Some(i) => self.read_index(i).map(Some),
            None => Ok(None),
        }
    }

    pub fn read_xml(&mut self, part: &str) -> Result<Option<String>, EngineError> {
        let Some(bytes) = self.read(part)? else {
            return Ok(None);
        };
        String::from_utf8(bytes).map(Some).map_err(|_| {
            EngineError::Unsupported(format!(
                "The part {part} is not UTF-8 encoded, which this service does not handle."
            ))
        })
    }

    /// Writes a new package: changed parts (by entry index) in their original
    /// place, everything else copied raw, `added` parts at the end.
    pub fn rewrite(
        mut self,
        changed: HashMap<usize, Vec<u8>>,
        added: Vec<(String, Vec<u8>)>,
    ) -> Result<Vec<u8>, EngineError> {
        let mut w = ZipWriter::new(Cursor::new(Vec::new()));
        let deflate =
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for i in 0..self.names.len() {
            if let Some(data) = changed.get(&i) {
                let modified = self
                    .archive
                    .by_index_raw(i)
                    .map_err(zip_err)?
                    .last_modified();
                let opts = match modified {
                    Some(t) => deflate.last_modified_time(t),
                    None => deflate,
                };
                w.start_file(self.names[i].clone(), opts).map_err(zip_err)?;
                w.write_all(data).map_err(|e| zip_err(e.into()))?;
            } else {
                let file = self.archive.by_index_raw(i).map_err(zip_err)?;
                w.raw_copy_file(file).map_err(zip_err)?;
            }
        }
        for (name, data) in added {
            w.start_file(name, deflate).map_err(zip_err)?;
            w.write_all(&data).map_err(|e| zip_err(e.into()))?;
        }
        Ok(w.finish().map_err(zip_err)?.into_inner())
    }
}

fn too_large(name: &str, limit: u64) -> EngineError {
    EngineError::Corrupt(format!(
        "The part {name} is too large when unpacked (over {} bytes).",
        limit
    ))
}

pub(crate) struct Relationship {
    pub id: String,
    pub rel_type: String,
    /// Resolved to a part name without a leading slash; `None` for external targets.
    pub part: Option<String>,
}

/// `word/document.xml` → `word/_rels/document.xml.rels`.
pub(crate) fn rels_part_for(part: &str) -> String {
    let part = part.trim_start_matches('/');
    match part.rfind('/') {
        Some(i) => format!("{}/_rels/{}.rels", &part[..i], &part[i + 1..]),
        None => format!("_rels/{part}.rels"),
    }
}

pub(crate) fn dir_of(part: &str) -> &str {
    let part = part.trim_start_matches('/');
    part.rfind('/').map_or("", |i| &part[..i])
}

/// Resolves a relationship target against the directory of its source part.
pub(crate) fn resolve_target(source_dir: &str, target: &str) -> String {
    let target = target.split('#').next().unwrap_or("");
    let mut segs: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        source_dir.split('/').filter(|s| !s.is_empty()).collect()
    };
    for s in target.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                segs.pop();
            }
            s => segs.push(s),
        }
    }
    segs.join("/")
}

/// The relative path from directory `from_dir` to `part`, as a relationship target.
pub(crate) fn relative_target(from_dir: &str, part: &str) -> String {
    let from: Vec<&str> = from_dir.split('/').filter(|s| !s.is_empty()).collect();
    let to: Vec<&str> = part.split('/').filter(|s| !s.is_empty()).collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out: Vec<&str> = vec![".."; from.len() - common];
    out.extend(&to[common..]);
    out.join("/")
}

pub(crate) fn parse_rels(
    xml: &str,
    part: &str,
    source_part: &str,
) -> Result<Vec<Relationship>, EngineError> {
    let tree = Tree::parse(xml, part)?;
    let dir = dir_of(source_part);
    let mut out = Vec::new();
    for c in tree.children_named(tree.root(), Ns::Rel, "Relationship") {
        let e = &tree.elems[c];
        let id = e.attr(Ns::None, "Id").unwrap_or_default().to_owned();
        let rel_type = e.attr(Ns::None, "Type").unwrap_or_default().to_owned();
        let target = e.attr(Ns::None, "Target").unwrap_or_default().to_owned();
        let external = e
            .attr(Ns::None, "TargetMode")
            .is_some_and(|m| m.eq_ignore_ascii_case("External"));
        let part = (!external).then(|| resolve_target(dir, &target));
        out.push(Relationship { id, rel_type, part });
    }
    Ok(out)
}

/// The package relationship types that name the main part, transitional and strict.
const OFFICE_DOCUMENT: [&str; 2] = [
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument",
    "http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument",
];

/// The main part `_rels/.rels` names (its zip entry's name, as it is spelled there),
/// or `None` when the package has no officeDocument relationship.
pub(crate) fn main_part(pkg: &mut Package<'_>) -> Result<Option<String>, EngineError> {
    let Some(xml) = pkg.read_xml("_rels/.rels")? else {
        return Ok(None);
    };
    let main = parse_rels(&xml, "_rels/.rels", "")?
        .into_iter()
        .find(|r| OFFICE_DOCUMENT.contains(&r.rel_type.trim()))
        .and_then(|r| r.part);
    Ok(main.map(|part| match pkg.find(&part) {
        Some(i) => pkg.names()[i].clone(),
        None => part,
    }))
}

/// The content type `[Content_Types].xml` gives `part`: its Override, else the Default
/// for its extension, names compared case-insensitively as OPC requires.
pub(crate) fn content_type(types: &Tree<'_>, part: &str) -> Option<String> {
    let part = part.trim_start_matches('/');
    let listed = |kind: &str, key: &str, want: &str| {
        types
            .children_named(types.root(), Ns::Ct, kind)
            .map(|c| &types.elems[c])
            .find(|e| {
                e.attr(Ns::None, key)
                    .is_some_and(|k| k.trim().trim_start_matches('/').eq_ignore_ascii_case(want))
            })
            .and_then(|e| e.attr(Ns::None, "ContentType"))
            .map(|t| t.trim().to_owned())
    };
    let name = part.rsplit('/').next().unwrap_or(part);
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    listed("Override", "PartName", part).or_else(|| listed("Default", "Extension", ext))
}

/// A relationship id not yet used in `rels`, in the `rIdN` style Office writes.
pub(crate) fn fresh_rel_id(rels: &[Relationship]) -> String {
    let max = rels
        .iter()
        .filter_map(|r| r.id.strip_prefix("rId").and_then(|n| n.parse::<u64>().ok()))
        .max()
        .unwrap_or(0);
    let mut n = max + 1;
    loop {
        let id = format!("rId{n}");
        if rels.iter().all(|r| r.id != id) {
            return id;
        }
        n += 1;
    }
}
