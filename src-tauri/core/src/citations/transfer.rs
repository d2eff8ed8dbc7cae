//! A cite's document both ways without ever holding it whole: the request body is
//! made from the open file (base64 encoded chunk by chunk, its length known before
//! a byte is sent), and the answer's `documentBase64` is decoded into the output
//! file as it arrives. Memory stays a few chunks whatever the document's size.

use crate::citations::documents::{self, MAX_DOCUMENT_BYTES, OpenDocument};
use crate::error::{Error, ErrorCode, Result};
use crate::net::api::Streamed;
use crate::net::http::MAX_JSON_ANSWER_BYTES;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use bytes::Bytes;
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// Raw bytes read per chunk: a multiple of 3, so chunks' base64 join with no padding
/// between them.
const RAW_CHUNK: usize = 3 * 16 * 1024;

/// The body of a cite request whose document is on disk. Cloning shares the file, so
/// each retry after a 429 streams it again from the start.
#[derive(Clone)]
pub(crate) struct DocumentBody {
    file: Arc<File>,
    len: u64,
    head: Bytes,
    tail: Bytes,
    /// Why streaming stopped, when the cause is the file rather than the network.
    problem: Arc<Mutex<Option<Error>>>,
    /// Bytes handed to the transport so far in this attempt (for the upload's progress).
    sent: Arc<std::sync::atomic::AtomicU64>,
}

enum Part {
    Head,
    Document(u64),
    Tail,
    Done,
}

impl DocumentBody {
    /// `head` and `tail` are the JSON before and after the document's base64.
    pub fn new(doc: &OpenDocument, head: &'static [u8], tail: String) -> Result<Self> {
        let file = doc
            .file
            .try_clone()
            .map_err(|e| Error::io("Cannot read the document", &e))?;
        Ok(Self {
            file: Arc::new(file),
            len: doc.len,
            head: Bytes::from_static(head),
            tail: Bytes::from(tail),
            problem: Arc::default(),
            sent: Arc::default(),
        })
    }

    /// The body's bytes, a chunk at a time, read from the file as they are asked for.
    pub fn chunks(
        &self,
    ) -> impl futures_util::Stream<Item = std::io::Result<Bytes>> + Send + 'static {
        let me = self.clone();
        me.sent.store(0, std::sync::atomic::Ordering::Relaxed);
        futures_util::stream::try_unfold(Part::Head, move |part| {
            let me = me.clone();
            async move {
                let next = match part {
                    Part::Head => Some((me.head.clone(), Part::Document(0))),
                    Part::Document(offset) => {
                        let reading = me.clone();
                        let read = tokio::task::spawn_blocking(move || reading.encode_at(offset))
                            .await
                            .map_err(std::io::Error::other)?;
                        match read {
                            Ok(next) => Some(next),
                            Err(e) => {
                                let said = e.to_string();
                                *me.problem.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                                return Err(std::io::Error::other(said));
                            }
                        }
                    }
                    Part::Tail => Some((me.tail.clone(), Part::Done)),
                    Part::Done => None,
                };
                if let Some((chunk, _)) = &next {
                    me.sent
                        .fetch_add(chunk.len() as u64, std::sync::atomic::Ordering::Relaxed);
                }
                Ok::<_, std::io::Error>(next)
            }
        })
    }

    /// The base64 of the chunk at `offset`, and what comes after it. The file must still
    /// be the size it was checked at: a document that changes while it is sent would
    /// arrive as neither version.
    fn encode_at(&self, offset: u64) -> Result<(Bytes, Part)> {
        let changed = || {
            Error::new(
                ErrorCode::InvalidInput,
                "The document changed while it was being sent. Cite it again once it is saved.",
            )
        };
        let want = (self.len - offset).min(RAW_CHUNK as u64) as usize;
        let mut raw = vec![0u8; want];
        let got = documents::read_at_most(&self.file, offset, &mut raw)
            .map_err(|e| Error::io("Cannot read the document", &e))?;
        if got < want {
            return Err(changed());
        }
        let end = offset + want as u64;
        let next = if end < self.len {
            Part::Document(end)
        } else {
            let now = self
                .file
                .metadata()
                .map_err(|e| Error::io("Cannot read the document", &e))?;
            if now.len() != self.len {
                return Err(changed());
            }
            Part::Tail
        };
        Ok((Bytes::from(B64.encode(&raw)), next))
    }
}

impl Streamed for DocumentBody {
    fn content_length(&self) -> u64 {
        self.head.len() as u64 + self.len.div_ceil(3) * 4 + self.tail.len() as u64
    }

    fn problem(&self) -> Option<Error> {
        self.problem
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn body(&self) -> reqwest::Body {
        reqwest::Body::wrap_stream(self.chunks())
    }

    fn sent(&self) -> u64 {
        self.sent.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Where a cite answer's parts go while it arrives.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Before the answer's `{`.
    Start,
    /// After `{`: a key or `}`.
    FirstKey,
    /// After `,`: a key.
    Key,
    /// Inside a key's quotes.
    InKey { escaped: bool },
    /// After a key: its `:`.
    Colon,
    /// After `:`: a value.
    Value,
    /// Inside `documentBase64`'s string.
    Document { escape: Escape },
    /// Inside any other member's value, kept as it is.
    Raw {
        depth: u32,
        in_string: bool,
        escaped: bool,
        scalar: bool,
    },
    /// After a value: `,` or `}`.
    Next,
    /// After the answer's `}`: only white space.
    End,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Escape {
    None,
    /// After `\`.
    Backslash,
    /// After `\u` and this many hex digits, with their value so far.
    Unicode(u8, u32),
}

/// Reads a cite answer (`{"documentBase64": "…", …}`) chunk by chunk as it arrives:
/// the document's base64 is decoded straight into `out`, and every other member is
/// kept as the answer's extras (up to [`MAX_JSON_ANSWER_BYTES`] of them). It refuses
/// what a whole-answer JSON and base64 reading would refuse, and nothing more, save
/// that white space inside the base64 (line breaks a server may add) is skipped.
pub struct CiteAnswerDecoder<W> {
    out: W,
    state: State,
    limit: u64,
    received: u64,
    key: Vec<u8>,
    is_document: bool,
    found: bool,
    /// `{` and the members other than the document, as raw JSON.
    extras: Vec<u8>,
    /// Base64 not yet decoded: always fewer than 4 characters between chunks.
    pending: Vec<u8>,
    decoded: Vec<u8>,
    written: u64,
}

/// A cite answer over `limit` bytes.
pub(crate) fn too_large(limit: u64) -> Error {
    protocol(format!(
        "Cite: the answer is larger than {} MB, more than Casebook reads.",
        limit as f64 / 1_000_000.0
    ))
}

fn protocol(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::Protocol, message)
}

fn not_json(detail: &str) -> Error {
    protocol(format!(
        "The citation service's answer is not valid JSON ({detail})."
    ))
}

fn not_base64(detail: impl std::fmt::Display) -> Error {
    protocol(format!(
        "The returned document is not valid base64 ({detail})."
    ))
}

/// Base64 characters decoded at a time.
const DECODE_BATCH: usize = 64 * 1024;

impl<W: Write> CiteAnswerDecoder<W> {
    /// `limit`: the most answer bytes read before refusing it as too large.
    pub fn new(out: W, limit: u64) -> Self {
        Self {
            out,
            state: State::Start,
            limit,
            received: 0,
            key: Vec::new(),
            is_document: false,
            found: false,
            extras: b"{".to_vec(),
            pending: Vec::new(),
            decoded: Vec::new(),
            written: 0,
        }
    }

    /// Takes the next piece of the answer, however it is cut.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<()> {
        self.received += chunk.len() as u64;
        if self.received > self.limit {
            return Err(too_large(self.limit));
        }
        let mut i = 0;
        while i < chunk.len() {
            i += self.step(&chunk[i..])?;
        }
        self.decode_ready()
    }

    /// The whole answer has arrived: the writer, the document's length and the extras.
    pub fn finish(mut self) -> Result<(W, u64, serde_json::Map<String, serde_json::Value>)> {
        if self.state != State::End {
            return Err(not_json("it ends early"));
        }
        if !self.found {
            return Err(protocol(
                "The citation service's answer has no documentBase64.",
            ));
        }
        self.extras.push(b'}');
        let extra = serde_json::from_slice(&self.extras).map_err(|e| not_json(&e.to_string()))?;
        self.out
            .flush()
            .map_err(|e| Error::io("Cannot write the cited document", &e))?;
        Ok((self.out, self.written, extra))
    }

    /// Consumes the start of `input` in the current state; how many bytes it took.
    fn step(&mut self, input: &[u8]) -> Result<usize> {
        let b = input[0];
        let space = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        match self.state {
            State::Start
            | State::Colon
            | State::Next
            | State::End
            | State::FirstKey
            | State::Key
                if space => {}
            State::Start if b == b'{' => self.state = State::FirstKey,
            State::FirstKey if b == b'}' => self.state = State::End,
            State::FirstKey | State::Key if b == b'"' => {
                self.key.clear();
                self.state = State::InKey { escaped: false };
            }
            State::InKey { escaped } => {
                if b < 0x20 {
                    return Err(not_json("a control character in a key"));
                }
                if !escaped && b == b'"' {
                    self.end_key()?;
                    self.state = State::Colon;
                } else {
                    self.key.push(b);
                    if self.key.len() as u64 > MAX_JSON_ANSWER_BYTES {
                        return Err(not_json("a key is too long"));
                    }
                    self.state = State::InKey {
                        escaped: !escaped && b == b'\\',
                    };
                }
            }
            State::Colon if b == b':' => self.state = State::Value,
            State::Value if space => {}
            State::Value if self.is_document => {
                if b != b'"' {
                    return Err(protocol(
                        "The citation service's documentBase64 is not a string.",
                    ));
                }
                self.found = true;
                self.state = State::Document {
                    escape: Escape::None,
                };
            }
            State::Value => {
                self.state = State::Raw {
                    depth: u32::from(matches!(b, b'{' | b'[')),
                    in_string: b == b'"',
                    escaped: false,
                    scalar: !matches!(b, b'{' | b'[' | b'"'),
                };
                self.keep(b)?;
            }
            State::Document { escape } => return self.document(input, escape),
            State::Raw {
                depth,
                in_string,
                escaped,
                scalar,
            } => {
                if scalar && (space || b == b',' || b == b'}') {
                    // The scalar ended at this byte, which belongs to what follows.
                    self.state = State::Next;
                    return self.step(input);
                }
                self.keep(b)?;
                let (mut depth, mut in_string, mut escaped) = (depth, in_string, escaped);
                if in_string {
                    if escaped {
                        escaped = false;
                    } else if b == b'\\' {
                        escaped = true;
                    } else if b == b'"' {
                        in_string = false;
                    }
                } else if b == b'"' {
                    in_string = true;
                } else if b == b'{' || b == b'[' {
                    depth += 1;
                } else if b == b'}' || b == b']' {
                    depth = depth.saturating_sub(1);
                }
                self.state = if !scalar && depth == 0 && !in_string {
                    State::Next
                } else {
                    State::Raw {
                        depth,
                        in_string,
                        escaped,
                        scalar,
                    }
                };
            }
            State::Next if b == b',' => self.state = State::Key,
            State::Next if b == b'}' => self.state = State::End,
            State::End => return Err(not_json("something follows the answer")),
            _ => {
                return Err(not_json(&format!(
                    "unexpected {:?} at byte {}",
                    char::from(b),
                    self.received
                )));
            }
        }
        Ok(1)
    }

    fn end_key(&mut self) -> Result<()> {
        let mut quoted = Vec::with_capacity(self.key.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(&self.key);
        quoted.push(b'"');
        let key: String = serde_json::from_slice(&quoted).map_err(|e| not_json(&e.to_string()))?;
        self.is_document = key == "documentBase64";
        if self.is_document {
            if self.found {
                return Err(protocol(
                    "The citation service's answer has documentBase64 twice.",
                ));
            }
        } else {
            if self.extras.len() > 1 {
                self.extras.push(b',');
            }
            self.extras.extend_from_slice(&quoted);
            self.extras.push(b':');
            self.check_extras()?;
        }
        Ok(())
    }

    fn keep(&mut self, b: u8) -> Result<()> {
        self.extras.push(b);
        self.check_extras()
    }

    fn check_extras(&self) -> Result<()> {
        if self.extras.len() as u64 > MAX_JSON_ANSWER_BYTES {
            return Err(protocol(format!(
                "The citation service's answer carries more than {} MB besides the document, more than Casebook reads.",
                MAX_JSON_ANSWER_BYTES / 1_000_000
            )));
        }
        Ok(())
    }

    /// Inside the document's string: runs of plain base64 are taken whole.
    fn document(&mut self, input: &[u8], escape: Escape) -> Result<usize> {
        let b = input[0];
        match escape {
            Escape::None => match b {
                b'"' => self.state = State::Next,
                b'\\' => {
                    self.state = State::Document {
                        escape: Escape::Backslash,
                    }
                }
                b' ' => {}
                0..0x20 => return Err(not_json("a control character in documentBase64")),
                _ => {
                    let run = input
                        .iter()
                        .position(|&c| c == b'"' || c == b'\\' || c < 0x21)
                        .unwrap_or(input.len());
                    self.pending.extend_from_slice(&input[..run]);
                    if self.pending.len() >= DECODE_BATCH {
                        self.decode_ready()?;
                    }
                    return Ok(run);
                }
            },
            Escape::Backslash => {
                self.state = State::Document {
                    escape: Escape::None,
                };
                match b {
                    b'/' => self.pending.push(b'/'),
                    b'n' | b'r' | b't' => {}
                    b'u' => {
                        self.state = State::Document {
                            escape: Escape::Unicode(0, 0),
                        }
                    }
                    b'"' | b'\\' | b'b' | b'f' => {
                        return Err(not_base64(format!("an escaped {:?}", char::from(b))));
                    }
                    _ => return Err(not_json("an unknown escape in documentBase64")),
                }
            }
            Escape::Unicode(n, value) => {
                let digit = char::from(b)
                    .to_digit(16)
                    .ok_or_else(|| not_json("a bad \\u escape in documentBase64"))?;
                let value = value * 16 + digit;
                if n < 3 {
                    self.state = State::Document {
                        escape: Escape::Unicode(n + 1, value),
                    };
                } else {
                    self.state = State::Document {
                        escape: Escape::None,
                    };
                    match u8::try_from(value) {
                        Ok(c) if c.is_ascii_whitespace() => {}
                        Ok(c) if c.is_ascii_graphic() => self.pending.push(c),
                        _ => return Err(not_base64(format!("the character U+{value:04X}"))),
                    }
                }
            }
        }
        Ok(1)
    }

    /// Decodes whole groups of four, keeping back the last group, since only the end of
    /// the string may hold padding.
    fn decode_ready(&mut self) -> Result<()> {
        let inside = matches!(self.state, State::Document { .. });
        let ready = if inside {
            self.pending.len().saturating_sub(1) / 4 * 4
        } else {
            self.pending.len()
        };
        if ready == 0 {
            return Ok(());
        }
        // Only the string's last group of four may hold padding.
        let unpadded = if inside { ready } else { ready - 4.min(ready) };
        if self.pending[..unpadded].contains(&b'=') {
            return Err(not_base64("padding before the end"));
        }
        if !inside && !self.pending.len().is_multiple_of(4) {
            return Err(not_base64("its length is not a multiple of four"));
        }
        for batch in self.pending[..ready].chunks(DECODE_BATCH) {
            self.decoded.resize(batch.len() / 4 * 3, 0);
            let n = B64.decode_slice(batch, &mut self.decoded).map_err(|e| {
                not_base64(match e {
                    base64::DecodeSliceError::DecodeError(e) => e.to_string(),
                    other => other.to_string(),
                })
            })?;
            if self.written + n as u64 > MAX_DOCUMENT_BYTES * 2 {
                return Err(protocol(
                    "The returned document is far larger than any document sent.",
                ));
            }
            self.out
                .write_all(&self.decoded[..n])
                .map_err(|e| Error::io("Cannot write the cited document", &e))?;
            self.written += n as u64;
        }
        self.pending.drain(..ready);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(answer: &[u8]) -> Result<(Vec<u8>, serde_json::Value)> {
        let mut d = CiteAnswerDecoder::new(Vec::new(), u64::MAX);
        d.feed(answer)?;
        let (out, n, extra) = d.finish()?;
        assert_eq!(n as usize, out.len());
        Ok((out, serde_json::Value::Object(extra)))
    }

    /// Every way of cutting `answer` in two gives what reading it whole gives.
    fn every_cut(answer: &[u8]) -> Result<(Vec<u8>, serde_json::Value)> {
        let expected = whole(answer);
        for cut in 0..=answer.len() {
            let mut d = CiteAnswerDecoder::new(Vec::new(), u64::MAX);
            let got = d
                .feed(&answer[..cut])
                .and_then(|()| d.feed(&answer[cut..]))
                .and_then(|()| d.finish())
                .map(|(out, _, extra)| (out, serde_json::Value::Object(extra)));
            match (&expected, &got) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "cut at {cut}"),
                (Err(a), Err(b)) => assert_eq!(a.code(), b.code(), "cut at {cut}"),
                _ => panic!("cut at {cut}: {got:?} but whole {expected:?}"),
            }
        }
        expected
    }

    #[test]
    fn the_document_is_decoded_and_other_members_kept_however_cut() {
        let doc: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let b64 = B64.encode(&doc);
        let answer = format!(
            r#" {{"stats": {{"a": [1, "x}}\"]"], "b": null}}, "n": -1.5e3, "documentBase64" : "{b64}", "t": true, "s": "\u00e9"}} "#
        );
        let (out, extra) = every_cut(answer.as_bytes()).unwrap();
        assert_eq!(out, doc);
        assert_eq!(
            extra,
            serde_json::json!({"stats": {"a": [1, "x}\"]"], "b": null}, "n": -1.5e3, "t": true, "s": "é"})
        );
    }

    #[test]
    fn escapes_and_line_breaks_in_the_base64_are_read() {
        let doc = b"any carnal pleasure?/?/?/";
        let b64 = B64.encode(doc);
        assert!(b64.contains('/'), "{b64}");
        let first = b64.as_bytes()[0];
        let rest = b64[1..].replace('/', "\\/");
        let answer = format!(r#"{{"documentBase64":"\u{first:04x}\r\n{rest}"}}"#);
        let (out, _) = every_cut(answer.as_bytes()).unwrap();
        assert_eq!(out, doc);
    }

    #[test]
    fn what_a_whole_reading_refuses_is_refused() {
        let refused = [
            (&br#"{"other": 1}"#[..], "no documentBase64"),
            (br#"{"documentBase64": null}"#, "not a string"),
            (br#"{"documentBase64": "QQ=="} x"#, "follows"),
            (br#"{"documentBase64": "QQ==""#, "ends early"),
            (br#"{"documentBase64": "QQ==QQ=="}"#, "padding"),
            (br#"{"documentBase64": "QQ="}"#, "base64"),
            (br#"{"documentBase64": "Q!=="}"#, "base64"),
            (
                br#"{"documentBase64": "QQ==", "documentBase64": "QQ=="}"#,
                "twice",
            ),
            (br#"{"documentBase64": "QQ==", "x": tru}"#, "JSON"),
            (br#"["documentBase64"]"#, "JSON"),
            (b"", "ends early"),
        ];
        for (answer, said) in refused {
            let e = every_cut(answer).unwrap_err();
            assert_eq!(e.code(), ErrorCode::Protocol, "{answer:?}");
            assert!(e.message().contains(said), "{answer:?}: {}", e.message());
        }
    }

    #[test]
    fn answers_and_extras_past_their_bounds_are_refused() {
        let mut d = CiteAnswerDecoder::new(Vec::new(), 10);
        assert!(d.feed(br#"{"documentBase64":"QQ=="}"#).is_err());
        let big = format!(
            r#"{{"x":"{}","documentBase64":"QQ=="}}"#,
            "a".repeat(MAX_JSON_ANSWER_BYTES as usize)
        );
        let e = whole(big.as_bytes()).unwrap_err();
        assert!(e.message().contains("besides the document"), "{e}");
    }

    #[test]
    fn it_agrees_with_serde_on_the_same_answer() {
        let doc = vec![0xA5u8; 70_001];
        let value = serde_json::json!({"documentBase64": B64.encode(&doc), "k": [1, {"z": "\""}]});
        let answer = serde_json::to_vec(&value).unwrap();
        let mut d = CiteAnswerDecoder::new(Vec::new(), u64::MAX);
        for piece in answer.chunks(997) {
            d.feed(piece).unwrap();
        }
        let (out, n, extra) = d.finish().unwrap();
        assert_eq!((out, n), (doc, 70_001));
        assert_eq!(
            serde_json::Value::Object(extra),
            serde_json::json!({"k": [1, {"z": "\""}]})
        );
    }
}
