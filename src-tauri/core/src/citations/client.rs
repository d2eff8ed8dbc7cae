//! The citation service: parse and cite, with documents checked before sending and
//! answers checked after.

use crate::citations::documents::{self, DocKind, MAX_REQUEST_BYTES, Paragraph};
use crate::citations::transfer::{CiteAnswerDecoder, DocumentBody};
use crate::citations::{reader, returned};
use crate::error::{Error, ErrorCode, Result};
use crate::keys::ApiKey;
use crate::net::api::{ApiClient, Limits, Payload, Streamed};
use crate::net::connection::Connection;
use crate::net::http::{Progress, RetryPolicy, network_error};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Cite and parse: a document up and a document (or its text) back.
const DOCUMENT: Limits = Limits {
    max_answer_bytes: documents::MAX_DOCUMENT_ANSWER_BYTES,
    timeout: documents::DOCUMENT_REQUEST_TIMEOUT,
    resendable: true,
};

/// How densely to cite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename_all = "snake_case")]
pub enum Mode {
    Every,
    #[default]
    EveryOther,
    Random,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Every => "every",
            Mode::EveryOther => "every_other",
            Mode::Random => "random",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "every" => Ok(Mode::Every),
            "every_other" | "every-other" => Ok(Mode::EveryOther),
            "random" => Ok(Mode::Random),
            other => Err(Error::invalid_input(format!(
                "Unknown mode \"{other}\": use every, every_other or random."
            ))),
        }
    }
}

/// Citation options, always sent explicitly so no server default matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct CiteOptions {
    pub mode: Mode,
    pub min_citations: u32,
    pub max_citations: u32,
    /// Repeatable random mode, where the service supports it.
    #[ts(optional, type = "number")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl Default for CiteOptions {
    fn default() -> Self {
        Self {
            mode: Mode::EveryOther,
            min_citations: 1,
            max_citations: 2,
            seed: None,
        }
    }
}

impl CiteOptions {
    /// The options as a [`ValidOptions`], or why they cannot be cited with. Called where
    /// options come in (settings, the window's cite, the CLI's arguments), so that the
    /// layers below take them as checked.
    pub fn validated(self) -> Result<ValidOptions> {
        if self.min_citations > self.max_citations {
            return Err(Error::invalid_input(format!(
                "The minimum ({}) is greater than the maximum ({}) citations per paragraph.",
                self.min_citations, self.max_citations
            )));
        }
        Ok(ValidOptions(self))
    }
}

/// [`CiteOptions`] that passed [`CiteOptions::validated`], the only way to make one
/// (the defaults are valid too): what takes these need not check them again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ValidOptions(CiteOptions);

impl std::ops::Deref for ValidOptions {
    type Target = CiteOptions;
    fn deref(&self) -> &CiteOptions {
        &self.0
    }
}

impl From<ValidOptions> for CiteOptions {
    fn from(o: ValidOptions) -> Self {
        o.0
    }
}

/// What to send: pasted text, or a checked document.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    Essay(&'a str),
    Document { bytes: &'a [u8], kind: DocKind },
}

impl<'a> Input<'a> {
    /// Checks the bytes are a .docx or .pptx before anything is sent.
    pub fn document(bytes: &'a [u8]) -> Result<Self> {
        let kind = documents::sniff(bytes)?;
        Ok(Input::Document { bytes, kind })
    }

    pub fn essay(text: &'a str) -> Result<Self> {
        if text.trim().is_empty() {
            return Err(Error::invalid_input("The text is empty."));
        }
        Ok(Input::Essay(text))
    }
}

/// The JSON after the document or essay in a request: the options and the closing brace.
fn options_tail(options: Option<&ValidOptions>) -> String {
    let mut tail = String::new();
    if let Some(o) = options {
        tail.push_str(&format!(
            ",\"mode\":\"{}\",\"minCitations\":{},\"maxCitations\":{}",
            o.mode.as_str(),
            o.min_citations,
            o.max_citations
        ));
        if let Some(seed) = o.seed {
            tail.push_str(&format!(",\"seed\":{seed}"));
        }
    }
    tail.push('}');
    tail
}

const DOCUMENT_HEAD: &[u8] = b"{\"fileBase64\":\"";

/// The cite request for a document on disk, the same bytes [`request_body`] makes,
/// streamed from the file.
pub(crate) fn document_body(
    doc: &documents::OpenDocument,
    options: &ValidOptions,
) -> Result<DocumentBody> {
    let body = DocumentBody::new(
        doc,
        DOCUMENT_HEAD,
        format!("\"{}", options_tail(Some(options))),
    )?;
    if doc.len > documents::MAX_DOCUMENT_BYTES || body.content_length() > MAX_REQUEST_BYTES {
        return Err(documents::too_large(doc.len));
    }
    Ok(body)
}

/// Builds a request body with one copy of the document: its base64 is encoded
/// straight into the body buffer between the JSON around it.
pub fn request_body(input: &Input<'_>, options: Option<&ValidOptions>) -> Result<Vec<u8>> {
    let tail = options_tail(options);
    let body = match input {
        Input::Essay(text) => {
            let escaped =
                serde_json::to_string(text).map_err(|e| Error::invalid_input(e.to_string()))?;
            let mut body = Vec::with_capacity(10 + escaped.len() + tail.len());
            body.extend_from_slice(b"{\"essay\":");
            body.extend_from_slice(escaped.as_bytes());
            body.extend_from_slice(tail.as_bytes());
            body
        }
        Input::Document { bytes, .. } => {
            // The same limit the document cards show, so what was said to fit does.
            if bytes.len() as u64 > documents::MAX_DOCUMENT_BYTES {
                return Err(documents::too_large(bytes.len() as u64));
            }
            let encoded = base64::encoded_len(bytes.len(), true)
                .ok_or_else(|| documents::too_large(bytes.len() as u64))?;
            let total = DOCUMENT_HEAD.len() + encoded + 1 + tail.len();
            if total as u64 > MAX_REQUEST_BYTES {
                return Err(documents::too_large(bytes.len() as u64));
            }
            let mut body = Vec::with_capacity(total);
            body.extend_from_slice(DOCUMENT_HEAD);
            let start = body.len();
            body.resize(start + encoded, 0);
            let written = B64.encode_slice(bytes, &mut body[start..]).map_err(|e| {
                Error::new(
                    ErrorCode::Internal,
                    format!("Cannot encode the document: {e}"),
                )
            })?;
            body.truncate(start + written);
            body.push(b'"');
            body.extend_from_slice(tail.as_bytes());
            body
        }
    };
    if body.len() as u64 > MAX_REQUEST_BYTES {
        return Err(Error::new(
            ErrorCode::TooLarge,
            format!(
                "The request would be {:.1} MB; the citation service accepts 12 MB.",
                body.len() as f64 / 1_048_576.0
            ),
        ));
    }
    Ok(body)
}

/// What parse found, with anything the service added kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Parsed {
    pub paragraphs: Vec<Paragraph>,
    pub references: Vec<String>,
    pub references_heading: Option<String>,
    /// Fields the contract does not name, as the service sent them.
    #[ts(type = "Record<string, unknown>")]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Parsed {
    /// Reads a parse answer leniently: entries may be objects or strings, `index`
    /// defaults to the position, `references` may be missing. Only an answer
    /// without a list of paragraphs is refused; [`read_parse_answer`] shows even that.
    pub fn from_json(v: serde_json::Value) -> Result<Self> {
        let protocol = |m: &str| Error::new(ErrorCode::Protocol, format!("The parse answer {m}."));
        let obj = v
            .as_object()
            .ok_or_else(|| protocol("is not a JSON object"))?;
        known_fields(obj).map_err(protocol)
    }
}

impl From<reader::LocalDocument> for Parsed {
    fn from(d: reader::LocalDocument) -> Self {
        Parsed {
            paragraphs: d.paragraphs,
            references: d.references,
            references_heading: d.references_heading,
            extra: Default::default(),
        }
    }
}

/// A parse answer's paragraphs and References, or why it has none we know.
fn known_fields(
    obj: &serde_json::Map<String, serde_json::Value>,
) -> std::result::Result<Parsed, &'static str> {
    use serde_json::Value;
    let paras = match obj.get("paragraphs") {
        Some(Value::Array(items)) => items,
        Some(_) => return Err("has paragraphs that are not a list"),
        None => return Err("has no paragraphs"),
    };
    let number = |o: &serde_json::Map<String, Value>, k: &str| {
        o.get(k)
            .and_then(Value::as_u64)
            .and_then(|x| u32::try_from(x).ok())
    };
    let mut paragraphs = Vec::with_capacity(paras.len());
    for (i, p) in paras.iter().enumerate() {
        let position = u32::try_from(i).unwrap_or(u32::MAX);
        paragraphs.push(match p {
            Value::String(s) => Paragraph {
                index: position,
                text: s.clone(),
                slide: None,
                style: None,
                notes: false,
            },
            Value::Object(o) => Paragraph {
                index: number(o, "index").unwrap_or(position),
                text: o
                    .get("text")
                    .and_then(Value::as_str)
                    .ok_or("has a paragraph without text")?
                    .to_owned(),
                slide: number(o, "slide"),
                style: o.get("style").and_then(Value::as_str).map(str::to_owned),
                notes: false,
            },
            _ => return Err("has a paragraph that is neither text nor an object"),
        });
    }
    let mut extra = obj.clone();
    extra.remove("paragraphs");
    let entry = |r: &Value| match r {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("text").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    let mut references = Vec::new();
    match extra.remove("references") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            references = items.iter().filter_map(entry).collect();
            // Entries we cannot read stay visible, as the service sent them.
            if references.len() < items.len() {
                extra.insert("references".into(), Value::Array(items));
            }
        }
        Some(other) => {
            extra.insert("references".into(), other);
        }
    }
    let references_heading = match extra.remove("referencesHeading") {
        Some(Value::String(h)) => Some(h),
        None | Some(Value::Null) => None,
        Some(other) => {
            extra.insert("referencesHeading".into(), other);
            None
        }
    };
    Ok(Parsed {
        paragraphs,
        references,
        references_heading,
        extra,
    })
}

/// Where a preview's paragraphs came from.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum PreviewSource {
    /// The citation service's parse.
    Service,
    /// Casebook's own reading, because the service's preview failed; `note` says why.
    Local { note: String },
}

/// What the preview shows: paragraphs when they can be had, otherwise the
/// service's answer as it came, readable.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum Preview {
    Paragraphs {
        parsed: Parsed,
        source: PreviewSource,
    },
    Raw {
        /// Pretty-printed JSON, or the text itself, cut to [`MAX_PREVIEW_TEXT_BYTES`].
        text: String,
        /// Why the answer is shown raw, for a person.
        note: String,
    },
}

/// The most of a raw answer the preview shows.
pub const MAX_PREVIEW_TEXT_BYTES: usize = 64 * 1024;
/// Larger parse answers are not decoded, only excerpted.
pub const MAX_PARSE_ANSWER_BYTES: usize = 32 * 1024 * 1024;

/// Reads whatever a parse endpoint answered, never failing: the contract does not
/// show parse's shape, so an answer we do not know is shown, not refused.
pub fn read_parse_answer(bytes: &[u8]) -> Preview {
    if bytes.len() > MAX_PARSE_ANSWER_BYTES {
        return Preview::Raw {
            text: excerpt(bytes),
            note: format!(
                "The citation service's preview is {:.1} MB, too large to read; its beginning is shown.",
                bytes.len() as f64 / 1_048_576.0
            ),
        };
    }
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(v) => {
            let known = v.as_object().map(known_fields);
            match known {
                Some(Ok(parsed)) => Preview::Paragraphs {
                    parsed,
                    source: PreviewSource::Service,
                },
                Some(Err(why)) => raw_json(&v, &format!("The citation service's preview {why}")),
                None => raw_json(&v, "The citation service's preview is not a JSON object"),
            }
        }
        Err(_) if bytes.iter().all(|b| b.is_ascii_whitespace()) => Preview::Raw {
            text: String::new(),
            note: "The citation service's preview is empty.".into(),
        },
        Err(_) => Preview::Raw {
            text: excerpt(bytes),
            note: if std::str::from_utf8(bytes).is_ok() {
                "The citation service's preview is not JSON; it is shown as text.".into()
            } else {
                "The citation service's preview is neither JSON nor text; what can be read of it is shown.".into()
            },
        },
    }
}

fn raw_json(v: &serde_json::Value, why: &str) -> Preview {
    let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
    Preview::Raw {
        text: excerpt(pretty.as_bytes()),
        note: format!("{why}; it is shown as the service sent it."),
    }
}

/// At most [`MAX_PREVIEW_TEXT_BYTES`] of `bytes` as text: invalid UTF-8 and control
/// characters other than line breaks and tabs become U+FFFD.
fn excerpt(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(MAX_PREVIEW_TEXT_BYTES)];
    let mut text: String = String::from_utf8_lossy(cut)
        .chars()
        .map(|c| {
            if c.is_control() && !matches!(c, '\n' | '\t' | '\r') {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect();
    if cut.len() < bytes.len() {
        text.push_str("\n…");
    }
    text
}

/// What the cited document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum OutputKind {
    Docx,
    Pptx,
    Text,
}

impl OutputKind {
    /// A save dialog's filter: the kind's name and its extension.
    pub fn filter(self) -> (&'static str, &'static str) {
        match self {
            OutputKind::Docx => ("Word document", "docx"),
            OutputKind::Pptx => ("PowerPoint presentation", "pptx"),
            OutputKind::Text => ("Text", "txt"),
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            OutputKind::Docx => "docx",
            OutputKind::Pptx => "pptx",
            OutputKind::Text => "txt",
        }
    }
}

impl From<DocKind> for OutputKind {
    fn from(k: DocKind) -> Self {
        match k {
            DocKind::Docx => OutputKind::Docx,
            DocKind::Pptx => OutputKind::Pptx,
        }
    }
}

/// The rewritten document, checked to be what was asked for.
#[derive(Debug, Clone)]
pub struct Cited {
    pub bytes: Vec<u8>,
    pub kind: OutputKind,
    /// Fields the contract does not name, as the service sent them.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// A rewritten document decoded into a file as it arrived, checked to be what was asked for.
#[derive(Debug)]
pub struct CitedFile {
    pub file: std::fs::File,
    pub len: u64,
    pub kind: OutputKind,
    /// Fields the contract does not name, as the service sent them.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// What a cite into a file sends.
#[derive(Debug, Clone, Copy)]
pub enum Upload<'a> {
    /// Streamed from its open file.
    Document(&'a documents::OpenDocument),
    Essay(&'a str),
}

/// What came back, given what was sent (`sent`: the document's kind; `None` for an
/// essay), `got` (what the returned bytes are) and whether they are UTF-8 text. A
/// returned package must pass the checks a dropped one passes.
fn output_kind(
    sent: Option<DocKind>,
    got: Result<DocKind>,
    is_text: impl FnOnce() -> bool,
) -> Result<OutputKind> {
    let protocol = |m: String| Error::new(ErrorCode::Protocol, m);
    match sent {
        Some(kind) => {
            let got = got.map_err(refused_answer)?;
            if got != kind {
                return Err(protocol(format!(
                    "Sent a {} but the citation service returned a {}.",
                    kind.label(),
                    got.label()
                )));
            }
            Ok(OutputKind::from(got))
        }
        // A server may answer an essay with a document; keep it as what it is.
        None => match got {
            Ok(k) => Ok(OutputKind::from(k)),
            // A package, but not one that may be saved.
            Err(e) if !matches!(e.code, ErrorCode::NotADocument | ErrorCode::EmptyFile) => {
                Err(refused_answer(e))
            }
            Err(_) if is_text() => Ok(OutputKind::Text),
            Err(_) => Err(protocol("The cited text is not UTF-8.".into())),
        },
    }
}

/// Why a returned document is not saved, for a person: the service sent it, and the
/// check it failed is the one a dropped document would fail. A failure to read our own
/// copy of it is not the service's doing and stays as it is.
fn refused_answer(e: Error) -> Error {
    if !e.is_bad_document() {
        return e;
    }
    Error::new(
        e.code,
        format!(
            "The citation service returned a document Casebook refuses, so nothing was saved. {}",
            e.message
        ),
    )
}

fn sent_kind(input: &Input<'_>) -> Option<DocKind> {
    match input {
        Input::Document { kind, .. } => Some(*kind),
        Input::Essay(_) => None,
    }
}

/// Decodes a whole cite answer and checks the document is of the kind sent.
pub fn decode_cite_answer(body: &[u8], sent: &Input<'_>) -> Result<Cited> {
    let mut decoder = CiteAnswerDecoder::new(Vec::new(), u64::MAX);
    decoder.feed(body)?;
    let (bytes, _, extra) = decoder.finish()?;
    checked(bytes, extra, sent)
}

/// The decoded document, checked against what was sent.
fn checked(
    bytes: Vec<u8>,
    extra: serde_json::Map<String, serde_json::Value>,
    sent: &Input<'_>,
) -> Result<Cited> {
    let kind = output_kind(sent_kind(sent), returned::check(&bytes), || {
        std::str::from_utf8(&bytes).is_ok()
    })?;
    Ok(Cited { bytes, kind, extra })
}

/// The citation service, with one key.
#[derive(Clone, Debug)]
pub struct CitationClient {
    api: ApiClient,
}

impl CitationClient {
    pub fn new(conn: Connection, key: ApiKey) -> Self {
        Self {
            api: ApiClient::new(conn, key),
        }
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.api.retry = retry;
        self
    }

    pub fn connection(&self) -> &Connection {
        &self.api.conn
    }

    /// `POST /citations/v1/parse`.
    pub async fn parse(
        &self,
        input: &Input<'_>,
        progress: &(dyn Fn(Progress) + Send + Sync),
    ) -> Result<Parsed> {
        let body = request_body(input, None)?;
        let answer = self
            .api
            .post_within("/citations/v1/parse", "Parse", body, progress, DOCUMENT)
            .await?;
        let json: serde_json::Value = serde_json::from_slice(&answer).map_err(|e| {
            Error::new(
                ErrorCode::Protocol,
                format!("The parse answer is not valid JSON ({e})."),
            )
        })?;
        Parsed::from_json(json)
    }

    /// What the service will consider, for the preview: parse's answer in
    /// whatever shape it comes. When parse fails for a reason other than the key or
    /// the rate limit and `local` holds the document, Casebook's own reading of it is
    /// shown instead, with a note saying why.
    pub async fn preview(&self, input: &Input<'_>, local: Option<&[u8]>) -> Result<Preview> {
        let answer = match request_body(input, None) {
            Ok(body) => {
                self.api
                    .post_within("/citations/v1/parse", "Parse", body, &no_progress, DOCUMENT)
                    .await
            }
            Err(e) => Err(e),
        };
        let failed = match answer {
            Ok(bytes) => return Ok(read_parse_answer(&bytes)),
            Err(e) => e,
        };
        // These need the person to act (fix the key, wait), not another reading.
        let must_act = match failed.code {
            // A 403 is a refusal of this request, not a key to fix.
            ErrorCode::Unauthorized => failed.status != Some(403),
            ErrorCode::RateLimited | ErrorCode::Cancelled => true,
            _ => false,
        };
        let Some(doc) = local.filter(|_| !must_act) else {
            return Err(failed);
        };
        match reader::read(doc) {
            Ok(d) => Ok(Preview::Paragraphs {
                parsed: d.into(),
                source: PreviewSource::Local {
                    note: format!(
                        "The citation service's preview failed ({}), so this is Casebook's own reading of the document.",
                        failed.message.trim_end_matches('.')
                    ),
                },
            }),
            // The service's reason is the one to show; ours would only repeat it.
            Err(_) => Err(failed),
        }
    }

    /// `POST /citations/v1/cite`: the rewritten document, checked, in memory.
    pub async fn cite(
        &self,
        input: &Input<'_>,
        options: &ValidOptions,
        progress: &(dyn Fn(Progress) + Send + Sync),
    ) -> Result<Cited> {
        let body = request_body(input, Some(options))?;
        let (bytes, _, extra) = self
            .cite_to(Payload::Bytes(body.into()), progress, Vec::new())
            .await?;
        checked(bytes, extra, input)
    }

    /// `POST /citations/v1/cite` with the document streamed from its file and the
    /// answer decoded into `out` as it arrives: the document is never in memory whole.
    pub async fn cite_into(
        &self,
        upload: Upload<'_>,
        options: &ValidOptions,
        progress: &(dyn Fn(Progress) + Send + Sync),
        out: std::fs::File,
    ) -> Result<CitedFile> {
        let (payload, sent) = match upload {
            Upload::Document(doc) => (
                Payload::Streamed(Box::new(document_body(doc, options)?)),
                Some(doc.kind),
            ),
            Upload::Essay(text) => {
                let body = request_body(&Input::essay(text)?, Some(options))?;
                (Payload::Bytes(body.into()), None)
            }
        };
        // Page-cache writes of a chunk at a time: too short to need a blocking thread.
        let (out, len, extra) = self
            .cite_to(
                payload,
                progress,
                std::io::BufWriter::with_capacity(64 * 1024, out),
            )
            .await?;
        let file = out
            .into_inner()
            .map_err(|e| Error::io("Cannot write the cited document", e.error()))?;
        let kind = tokio::task::spawn_blocking(move || {
            let kind = output_kind(sent, returned::check_file(&file, len), || {
                is_utf8_file(&file, len)
            });
            kind.map(|k| (k, file))
        })
        .await
        .map_err(|e| Error::internal(format!("A background task failed: {e}")))?;
        let (kind, file) = kind?;
        Ok(CitedFile {
            file,
            len,
            kind,
            extra,
        })
    }

    async fn cite_to<W: std::io::Write>(
        &self,
        payload: Payload,
        progress: &(dyn Fn(Progress) + Send + Sync),
        out: W,
    ) -> Result<(W, u64, serde_json::Map<String, serde_json::Value>)> {
        let limits = DOCUMENT;
        let mut resp = self
            .api
            .send("/citations/v1/cite", "Cite", &payload, progress, limits)
            .await?;
        if resp
            .content_length()
            .is_some_and(|n| n > limits.max_answer_bytes)
        {
            return Err(crate::citations::transfer::too_large(
                limits.max_answer_bytes,
            ));
        }
        let mut decoder = CiteAnswerDecoder::new(out, limits.max_answer_bytes);
        while let Some(chunk) = resp.chunk().await.map_err(network_error)? {
            decoder.feed(&chunk)?;
        }
        decoder.finish()
    }
}

/// Whether the `len` bytes of `file` are UTF-8 text.
fn is_utf8_file(file: &std::fs::File, len: u64) -> bool {
    documents::read_text(file, len).is_ok()
}

/// A progress callback that ignores progress.
pub fn no_progress(_: Progress) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_body_is_exact_json_with_one_copy() {
        let doc = vec![7u8; 1000];
        let input = Input::Document {
            bytes: &doc,
            kind: DocKind::Docx,
        };
        let body = request_body(&input, Some(&ValidOptions::default())).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(B64.decode(v["fileBase64"].as_str().unwrap()).unwrap(), doc);
        assert_eq!(v["mode"], "every_other");
        assert_eq!(v["minCitations"], 1);
        assert_eq!(v["maxCitations"], 2);
        assert!(v.get("seed").is_none());
        assert_eq!(
            body.capacity(),
            body.len(),
            "the body is allocated once, at its exact size"
        );
    }

    #[tokio::test]
    async fn a_streamed_body_is_the_same_bytes_and_declares_its_length() {
        use futures_util::StreamExt as _;
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data");
        let mut remainders = std::collections::BTreeSet::new();
        for folder in ["docx", "pptx"] {
            for entry in std::fs::read_dir(format!("{data}/{folder}")).unwrap() {
                let path = entry.unwrap().path();
                let doc = documents::open_file(&path).unwrap();
                let bytes = std::fs::read(&path).unwrap();
                remainders.insert(bytes.len() % 3);
                let options = CiteOptions {
                    seed: Some(7),
                    ..Default::default()
                }
                .validated()
                .unwrap();
                let body = document_body(&doc, &options).unwrap();
                let mut streamed = Vec::new();
                let mut chunks = std::pin::pin!(body.chunks());
                while let Some(c) = chunks.next().await {
                    streamed.extend_from_slice(&c.unwrap());
                }
                let input = Input::Document {
                    bytes: &bytes,
                    kind: doc.kind,
                };
                let whole = request_body(&input, Some(&options)).unwrap();
                assert!(streamed == whole, "{}", path.display());
                assert_eq!(body.content_length(), streamed.len() as u64);
            }
        }
        assert_eq!(remainders.len(), 3, "sizes that end a base64 group and not");
    }

    #[tokio::test]
    async fn a_document_that_changes_while_sent_is_not_sent_as_neither() {
        use futures_util::StreamExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deck.pptx");
        std::fs::copy(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../tests/data/pptx/title-bullets-notes.pptx"
            ),
            &path,
        )
        .unwrap();
        let doc = documents::open_file(&path).unwrap();
        let body = document_body(&doc, &ValidOptions::default()).unwrap();
        for change in [1i64, -1] {
            let len = (doc.len as i64 + change) as u64;
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .unwrap()
                .set_len(len)
                .unwrap();
            let mut chunks = std::pin::pin!(body.chunks());
            let mut failed = None;
            while let Some(c) = chunks.next().await {
                if let Err(e) = c {
                    failed = Some(e);
                    break;
                }
            }
            assert!(failed.is_some(), "a change of {change} byte is noticed");
            let problem = body.problem().unwrap();
            assert_eq!(problem.code(), ErrorCode::InvalidInput);
            assert!(problem.message().contains("changed while"), "{problem}");
        }
    }

    #[test]
    fn essay_body_escapes_text() {
        let input = Input::essay("He said \"hi\"\nthen left.").unwrap();
        let body = request_body(&input, None).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"essay": "He said \"hi\"\nthen left."})
        );
    }

    #[test]
    fn oversize_is_refused_before_sending() {
        let doc = vec![0u8; documents::MAX_DOCUMENT_BYTES as usize + 1];
        let input = Input::Document {
            bytes: &doc,
            kind: DocKind::Docx,
        };
        let refused = request_body(&input, Some(&ValidOptions::default()))
            .err()
            .map(|e| e.code);
        assert_eq!(refused, Some(ErrorCode::TooLarge));
        let fits = vec![0u8; documents::MAX_DOCUMENT_BYTES as usize];
        let input = Input::Document {
            bytes: &fits,
            kind: DocKind::Docx,
        };
        let body = request_body(
            &input,
            Some(
                &CiteOptions {
                    seed: Some(u64::MAX),
                    ..Default::default()
                }
                .validated()
                .unwrap(),
            ),
        )
        .unwrap();
        assert!(body.len() as u64 <= MAX_REQUEST_BYTES, "{}", body.len());
    }

    #[test]
    fn min_above_max_is_refused() {
        let o = CiteOptions {
            min_citations: 3,
            max_citations: 1,
            ..Default::default()
        };
        let refused = o.validated().unwrap_err();
        assert_eq!(refused.code, ErrorCode::InvalidInput);
        assert_eq!(
            refused.message,
            "The minimum (3) is greater than the maximum (1) citations per paragraph."
        );
        assert_eq!(
            ValidOptions::default(),
            CiteOptions::default().validated().unwrap()
        );
    }

    #[test]
    fn parse_answers_are_read_leniently_and_keep_extras() {
        let v = serde_json::json!({
            "paragraphs": ["First", {"text": "Second", "slide": 2, "index": 5}],
            "references": [{"text": "Ref A"}, "Ref B"],
            "referencesHeading": "References",
            "kind": "pptx",
            "future": {"x": 1}
        });
        let p = Parsed::from_json(v).unwrap();
        assert_eq!(p.paragraphs[0].index, 0);
        assert_eq!(p.paragraphs[1].index, 5);
        assert_eq!(p.paragraphs[1].slide, Some(2));
        assert_eq!(p.references, vec!["Ref A", "Ref B"]);
        assert_eq!(p.extra["future"]["x"], 1);
        assert_eq!(p.extra["kind"], "pptx");
        let bad = Parsed::from_json(serde_json::json!({"references": []})).unwrap_err();
        assert_eq!(bad.code, ErrorCode::Protocol);
    }

    #[test]
    fn cite_answers_must_be_the_kind_sent() {
        let input = Input::Document {
            bytes: b"",
            kind: DocKind::Docx,
        };
        let text = B64.encode("not a zip");
        let body = format!("{{\"documentBase64\":\"{text}\"}}");
        let refused = decode_cite_answer(body.as_bytes(), &input).unwrap_err();
        assert_eq!(refused.code, ErrorCode::NotADocument);
        assert!(
            refused
                .message
                .starts_with("The citation service returned a document Casebook refuses"),
            "{}",
            refused.message
        );
        let essay = Input::Essay("x");
        let cited = decode_cite_answer(body.as_bytes(), &essay).unwrap();
        assert_eq!(cited.kind, OutputKind::Text);
        assert_eq!(
            decode_cite_answer(b"{}", &essay).unwrap_err().code,
            ErrorCode::Protocol
        );
        assert_eq!(
            decode_cite_answer(b"{oops", &essay).unwrap_err().code,
            ErrorCode::Protocol
        );
    }

    fn paragraphs(p: Preview) -> Parsed {
        match p {
            Preview::Paragraphs {
                parsed,
                source: PreviewSource::Service,
            } => parsed,
            other => panic!("expected paragraphs, got {other:?}"),
        }
    }

    fn raw(p: Preview) -> (String, String) {
        match p {
            Preview::Raw { text, note } => (text, note),
            other => panic!("expected raw, got {other:?}"),
        }
    }

    #[test]
    fn the_sandbox_shape_is_read_as_paragraphs() {
        let answer = br#"{"kind":"docx","paragraphs":[{"index":0,"text":"Title","style":"Title"},{"index":1,"text":"Body.","slide":2}],"references":[{"index":0,"text":"Ref A"}],"referencesHeading":"References"}"#;
        let p = paragraphs(read_parse_answer(answer));
        assert_eq!(p.paragraphs.len(), 2);
        assert_eq!(p.paragraphs[0].style.as_deref(), Some("Title"));
        assert_eq!(p.paragraphs[1].slide, Some(2));
        assert_eq!(p.references, vec!["Ref A"]);
        assert_eq!(p.references_heading.as_deref(), Some("References"));
        assert_eq!(p.extra["kind"], "docx");
        let json = serde_json::to_value(read_parse_answer(answer)).unwrap();
        assert_eq!(json["type"], "paragraphs");
        assert_eq!(json["source"]["type"], "service");
        assert_eq!(json["parsed"]["referencesHeading"], "References");
    }

    #[test]
    fn strings_instead_of_objects_are_read() {
        let p = paragraphs(read_parse_answer(
            br#"{"paragraphs":["One","Two"],"references":["R1",{"text":"R2"},7],"referencesHeading":3}"#,
        ));
        assert_eq!(
            p.paragraphs
                .iter()
                .map(|p| (p.index, p.text.as_str()))
                .collect::<Vec<_>>(),
            vec![(0, "One"), (1, "Two")]
        );
        assert_eq!(p.references, vec!["R1", "R2"]);
        assert_eq!(
            p.extra["references"][2], 7,
            "unreadable entries stay visible"
        );
        assert_eq!(p.extra["referencesHeading"], 3);
        assert_eq!(p.references_heading, None);
    }

    #[test]
    fn other_shapes_are_shown_raw() {
        let (text, note) = raw(read_parse_answer(br#"{"blocks":[{"content":"x"}]}"#));
        assert!(text.contains("\n  \"blocks\": ["), "pretty-printed: {text}");
        assert!(note.contains("has no paragraphs"), "{note}");
        let (text, _) = raw(read_parse_answer(br#"{"paragraphs":[{"content":"x"}]}"#));
        assert!(text.contains("content"));
        let (_, note) = raw(read_parse_answer(br#"["a","b"]"#));
        assert!(note.contains("not a JSON object"), "{note}");
        let (text, note) = raw(read_parse_answer(b"Paragraph one.\n\nParagraph two."));
        assert_eq!(text, "Paragraph one.\n\nParagraph two.");
        assert!(note.contains("not JSON"), "{note}");
        let (text, note) = raw(read_parse_answer(b"\x00\xff\xfe{\x07"));
        assert!(!text.chars().any(|c| c.is_control()), "{text:?}");
        assert!(note.contains("neither JSON nor text"), "{note}");
        let (text, note) = raw(read_parse_answer(b"  "));
        assert_eq!((text.as_str(), note.contains("empty")), ("", true));
        let json = serde_json::to_value(read_parse_answer(b"x")).unwrap();
        assert_eq!(json["type"], "raw");
    }

    #[test]
    fn huge_and_deep_answers_are_bounded() {
        let big = format!(
            "{{\"blocks\":\"{}\"}}",
            "a".repeat(MAX_PREVIEW_TEXT_BYTES * 3)
        );
        let (text, _) = raw(read_parse_answer(big.as_bytes()));
        assert!(text.len() <= MAX_PREVIEW_TEXT_BYTES + 8, "{}", text.len());
        assert!(text.ends_with('…'));
        let huge = vec![b'['; MAX_PARSE_ANSWER_BYTES + 1];
        let (text, note) = raw(read_parse_answer(&huge));
        assert!(text.len() <= MAX_PREVIEW_TEXT_BYTES + 8);
        assert!(note.contains("too large"), "{note}");
        // Nesting past serde_json's limit is refused by the parser, not the stack.
        let deep = "[".repeat(100_000);
        raw(read_parse_answer(deep.as_bytes()));
        // A multi-byte character cut at the limit does not break the text.
        let mut cut = vec![b'x'; MAX_PREVIEW_TEXT_BYTES - 1];
        cut.extend("é and more".as_bytes());
        let (text, _) = raw(read_parse_answer(&cut));
        assert!(text.ends_with('…'));
    }

    #[test]
    fn damaged_answers_never_panic() {
        let answer = br#"{"paragraphs":[{"index":4294967296,"text":"A","slide":-1},"B"],"references":[{"text":"R"}],"referencesHeading":"References"}"#;
        let p = paragraphs(read_parse_answer(answer));
        assert_eq!((p.paragraphs[0].index, p.paragraphs[0].slide), (0, None));
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for len in 0..answer.len() {
            let _ = read_parse_answer(&answer[..len]);
        }
        for _ in 0..2000 {
            let mut b = answer.to_vec();
            for _ in 0..1 + next() % 4 {
                let at = (next() % b.len() as u64) as usize;
                b[at] = next() as u8;
            }
            let _ = serde_json::to_string(&read_parse_answer(&b)).unwrap();
        }
    }
}
