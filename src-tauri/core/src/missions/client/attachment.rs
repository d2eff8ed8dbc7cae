//! A document attached to the person's reply: read from disk with a bound, its media type
//! from its extension, and sent as an AI SDK file part (`{type: "file", data: <base64>,
//! mediaType, filename}`) beside the text (eve's `message` may be `UserContent`).

use crate::error::{Error, ErrorCode, Result};
use crate::missions::protocol::facts::readable_size;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::Serialize;
use serde_json::{Value, json};
use std::io::Read;
use std::path::Path;
use ts_rs::TS;

/// The most a reply attaches, all its files together: eve stores the message in its
/// session's stream, and a larger body is refused by the hosts it runs on.
pub const MAX_ATTACHMENT_BYTES: u64 = 12_000_000;
/// Files one reply attaches.
pub const MAX_ATTACHMENTS: usize = 10;
const MAX_NAME: usize = 200;

/// One file to send, read whole.
#[derive(Clone, PartialEq, Eq)]
pub struct Attachment {
    pub name: String,
    pub media_type: String,
    pub data: Vec<u8>,
}

impl std::fmt::Debug for Attachment {
    // The bytes are the person's document: never in a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attachment")
            .field("name", &self.name)
            .field("media_type", &self.media_type)
            .field("bytes", &self.data.len())
            .finish()
    }
}

/// A file chosen to attach, before it is sent: what the window shows beside the reply box.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct AttachmentChoice {
    pub path: String,
    pub name: String,
    pub media_type: String,
    #[ts(type = "number")]
    pub size: u64,
}

/// The name an attachment is sent under: its file name, cut to [`MAX_NAME`] characters.
fn attachment_name(path: &Path) -> Result<String> {
    path.file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .take(MAX_NAME)
                .collect::<String>()
        })
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| Error::invalid_input("The attachment has no file name."))
}

/// Refuses what is not a file, or one over [`MAX_ATTACHMENT_BYTES`], by what it is now.
fn attachable(name: &str, meta: &std::fs::Metadata) -> Result<()> {
    if !meta.is_file() {
        return Err(Error::invalid_input(format!("{name} is not a file.")));
    }
    if meta.len() > MAX_ATTACHMENT_BYTES {
        return Err(too_large(name, meta.len()));
    }
    Ok(())
}

impl AttachmentChoice {
    /// The file at `path`, refused as [`Attachment::read`] would refuse it, without
    /// reading it.
    pub fn of(path: &Path) -> Result<AttachmentChoice> {
        let name = attachment_name(path)?;
        let meta = std::fs::metadata(path).map_err(|e| Error::io("Attach", &e))?;
        attachable(&name, &meta)?;
        Ok(AttachmentChoice {
            path: path.display().to_string(),
            media_type: media_type_of(&name).to_owned(),
            name,
            size: meta.len(),
        })
    }
}

impl Attachment {
    /// Reads the file at `path`, refusing one over [`MAX_ATTACHMENT_BYTES`] before reading
    /// it (and one that grows past it while read).
    pub fn read(path: &Path) -> Result<Attachment> {
        let name = attachment_name(path)?;
        let file = std::fs::File::open(path).map_err(|e| Error::io("Attach", &e))?;
        let meta = file.metadata().map_err(|e| Error::io("Attach", &e))?;
        attachable(&name, &meta)?;
        let mut data = Vec::with_capacity(meta.len() as usize);
        file.take(MAX_ATTACHMENT_BYTES + 1)
            .read_to_end(&mut data)
            .map_err(|e| Error::io("Attach", &e))?;
        if data.len() as u64 > MAX_ATTACHMENT_BYTES {
            return Err(too_large(&name, data.len() as u64));
        }
        if data.is_empty() {
            return Err(Error::new(
                ErrorCode::EmptyFile,
                format!("{name} is empty: there is nothing to attach."),
            ));
        }
        Ok(Attachment {
            media_type: media_type_of(&name).to_owned(),
            name,
            data,
        })
    }

    /// The AI SDK file part.
    pub fn part(&self) -> Value {
        json!({
            "type": "file",
            "data": B64.encode(&self.data),
            "mediaType": self.media_type,
            "filename": self.name,
        })
    }
}

/// The follow-up's `message`: the text then each file, as AI SDK `UserContent`. Refused
/// (nothing sent) past [`MAX_ATTACHMENTS`] files or [`MAX_ATTACHMENT_BYTES`] together.
pub fn user_content(text: &str, files: &[Attachment]) -> Result<Value> {
    if files.len() > MAX_ATTACHMENTS {
        return Err(Error::invalid_input(format!(
            "A reply attaches at most {MAX_ATTACHMENTS} files; this one has {}.",
            files.len()
        )));
    }
    let total: u64 = files.iter().map(|f| f.data.len() as u64).sum();
    if total > MAX_ATTACHMENT_BYTES {
        return Err(Error::new(
            ErrorCode::TooLarge,
            format!(
                "The attachments come to {}: a reply attaches at most {} in all. Nothing was sent.",
                readable_size(total),
                readable_size(MAX_ATTACHMENT_BYTES)
            ),
        ));
    }
    let mut parts = Vec::with_capacity(files.len() + 1);
    if !text.trim().is_empty() {
        parts.push(json!({"type": "text", "text": text}));
    }
    parts.extend(files.iter().map(Attachment::part));
    Ok(Value::Array(parts))
}

fn too_large(name: &str, bytes: u64) -> Error {
    Error::new(
        ErrorCode::TooLarge,
        format!(
            "{name} is {}: a reply attaches at most {}. Nothing was sent.",
            readable_size(bytes),
            readable_size(MAX_ATTACHMENT_BYTES)
        ),
    )
}

/// The media type eve and the model are told, from the file's extension.
pub fn media_type_of(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "pdf" => "application/pdf",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "doc" => "application/msword",
        "txt" | "text" | "log" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_with_a_file_is_text_then_the_file_in_base64() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Brief.DOCX");
        std::fs::write(&path, b"PK\x03\x04 not really").unwrap();
        let a = Attachment::read(&path).unwrap();
        assert_eq!(
            a.media_type,
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        );
        let content = user_content("See attached", &[a]).unwrap();
        assert_eq!(
            content,
            json!([
                {"type": "text", "text": "See attached"},
                {"type": "file", "data": B64.encode(b"PK\x03\x04 not really"),
                 "mediaType": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                 "filename": "Brief.DOCX"}
            ])
        );
        assert!(!format!("{:?}", Attachment::read(&path).unwrap()).contains("not really"));
    }

    #[test]
    fn a_file_past_the_bound_or_empty_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.pdf");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_ATTACHMENT_BYTES + 500_000).unwrap();
        let e = Attachment::read(&big).unwrap_err();
        assert_eq!(e.code, ErrorCode::TooLarge);
        assert!(
            e.message
                .starts_with("big.pdf is 12.5 MB: a reply attaches at most 12.0 MB"),
            "{}",
            e.message
        );
        let empty = dir.path().join("empty.txt");
        std::fs::write(&empty, b"").unwrap();
        assert_eq!(
            Attachment::read(&empty).unwrap_err().code,
            ErrorCode::EmptyFile
        );
        assert_eq!(media_type_of("notes.md"), "text/markdown");
        assert_eq!(media_type_of("noext"), "application/octet-stream");
    }
}
