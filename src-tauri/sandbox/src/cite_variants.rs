//! The other legal ways a real citation service answers, each off by default: a
//! startup flag, a [`crate::SandboxConfig::citations`] field and a
//! `POST /_sandbox/faults` field. The research behind them
//! (`/work/shared/research/citation-service.md`): the closest real service cites only
//! from the document's own reference list, appends nothing and refuses a document
//! without a References section; it cites inside sentences, cites .pptx speaker
//! notes, scrubs metadata and is not repeatable; and real services answer errors in
//! several body families, some from a proxy in front.
//!
//! | knob | off (default) | on |
//! |---|---|---|
//! | `require_references` | a document without References is cited (a list is added) | `422`, "No References section was found; …" |
//! | `style` | works from the sandbox's library, a reference list added | [`CiteStyle::Existing`]: only the document's own entries, nothing appended |
//! | `placement` | end of the paragraph | [`Placement::Inside`]: before the full stop of a sentence picked at random, varied author–year shapes |
//! | `shape` | `(Smith, 2019)` | `[3]` ([`CiteShape::Numeric`]), `[Smith 2019]` ([`CiteShape::Bracketed`]) or `(ibid.)` for a repeat ([`CiteShape::Ibid`]) |
//! | `notes` | slides only | .pptx speaker notes cited too |
//! | `scrub_metadata` | docProps as uploaded | creator, lastModifiedBy, Company, Manager blanked |
//! | `unseeded` | seeded from the document (or `seed`) | a fresh random seed each call |
//! | `error_family` | `{"error": {"code", "message", …}}` | see [`ErrorFamily`] |
//! | `front_limit_bytes` | only the 12 MB limit (JSON 413) | a front answers `413` (HTML) past N bytes, from the headers |
//! | `slow_cite_ms` | the cite answers when done | it holds its answer N ms after reading the request |
//! | `hostile_document` | the cited document | the cited document with a hostile zip entry ([`HostileDocument`]) |

pub use crate::engine::{CiteShape, CiteStyle, Placement};
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

/// The body family of the citation service's error answers (400, 401, 413, 422, 429,
/// 500). Status and headers (`WWW-Authenticate`, `Retry-After`) stay as they are.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorFamily {
    /// Today's `{"error": {"code", "message"}}`, with extra fields such as `field`.
    #[default]
    Default,
    /// `{"error": "<message>"}`.
    PlainError,
    /// `{"error": {"code", "message"}}` and nothing else.
    Nested,
    /// `{"message": "<message>"}`.
    Message,
    /// `{"detail": "<message>"}`.
    Detail,
    /// RFC 9457 `application/problem+json`: `{type, title, status, detail}`.
    Problem,
    /// `text/plain`: the message as a sentence. A proxy in front wrote it, so 401 is
    /// not JSON here either: a legal deployment shape, not the service itself.
    Text,
    /// `text/html`: a short page with a title, from something in front (401 too).
    Html,
}

/// The citation service's variants; `Default` is the sandbox as it always was. Each is a
/// knob ([`crate::knobs::Knobs`]) under the name it is serialized with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CiteVariants {
    /// Refuse (422) a document or essay with no References section (or none with
    /// entries).
    pub require_references: bool,
    /// `"library"` (default) or `"existing"`: cite only from the document's own
    /// reference list, append nothing (`referencesAdded` 0).
    #[serde(rename = "citeStyle")]
    pub style: CiteStyle,
    /// `"end"` (default) or `"inside"`: before the full stop of a sentence picked at
    /// random, in varied author–year shapes.
    pub placement: Placement,
    /// `"author-year"` (default), `"numeric"` (`[3]`), `"bracketed"` (`[Smith 2019]`)
    /// or `"ibid"` (`(ibid.)` for the work the paragraph before cited).
    #[serde(rename = "citeShape")]
    pub shape: CiteShape,
    /// Cite .pptx speaker notes too.
    #[serde(rename = "citeNotes")]
    pub notes: bool,
    /// Blank the author, last author, company and manager in `docProps`.
    pub scrub_metadata: bool,
    /// A random seed each call, so results are not repeatable (a `seed` field is
    /// ignored too: real services have none).
    pub unseeded: bool,
    /// `"default"`, `"plain-error"`, `"nested"`, `"message"`, `"detail"`, `"problem"`,
    /// `"text"` or `"html"`.
    pub error_family: ErrorFamily,
    /// A front with a smaller body limit: over this many bytes, `413` with an HTML
    /// page before the service reads the body (0: off).
    #[serde(deserialize_with = "crate::off::zero")]
    pub front_limit_bytes: Option<u64>,
    /// The cite holds its answer this many ms after reading the request (0: off).
    pub slow_cite_ms: u64,
    /// A cited document comes back with a hostile entry in its zip (`"none"`: off).
    #[serde(deserialize_with = "crate::off::none")]
    pub hostile_document: Option<HostileDocument>,
}

/// Statuses whose bodies [`ErrorFamily`] rewrites.
pub(crate) fn family_applies(status: StatusCode) -> bool {
    matches!(status.as_u16(), 400 | 401 | 413 | 422 | 429 | 500)
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The body and content type of an error in `family`, from the default body's code
/// and message. `None` for [`ErrorFamily::Default`].
pub(crate) fn family_body(
    family: ErrorFamily,
    status: StatusCode,
    code: &str,
    message: &str,
) -> Option<(&'static str, String)> {
    let reason = status.canonical_reason().unwrap_or("Error");
    let json = "application/json";
    let v = match family {
        ErrorFamily::Default => return None,
        ErrorFamily::PlainError => (json, serde_json::json!({"error": message}).to_string()),
        ErrorFamily::Nested => (
            json,
            serde_json::json!({"error": {"code": code, "message": message}}).to_string(),
        ),
        ErrorFamily::Message => (json, serde_json::json!({"message": message}).to_string()),
        ErrorFamily::Detail => (json, serde_json::json!({"detail": message}).to_string()),
        ErrorFamily::Problem => (
            "application/problem+json",
            serde_json::json!({
                "type": format!("https://errors.casebook-sandbox.invalid/{code}"),
                "title": reason,
                "status": status.as_u16(),
                "detail": message,
            })
            .to_string(),
        ),
        ErrorFamily::Text => ("text/plain; charset=utf-8", format!("{message}\n")),
        ErrorFamily::Html => (
            "text/html; charset=utf-8",
            format!(
                "<!DOCTYPE html>\n<html><head><title>{} {reason}</title></head>\n<body><h1>{} {reason}</h1><p>{}</p><hr><p>front</p></body></html>\n",
                status.as_u16(),
                status.as_u16(),
                escape_html(message)
            ),
        ),
    };
    Some(v)
}

/// The front's 413: nginx's page, `text/html`, and the connection closed after it.
pub(crate) fn front_too_large() -> Response {
    let page = "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
    let mut resp = Response::new(Body::from(page));
    *resp.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// A cite answer no service should send: the real cited document with one hostile
/// entry added to its zip, to show what a client does with a returned package it
/// must not save.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum HostileDocument {
    /// An entry of zeros that inflates to 2.3 GB from about 2 MB (a zip bomb).
    Bomb,
    /// The same bomb, but its local and central headers both declare it 1 KB (its
    /// checksum is the real one): only inflating it tells.
    LyingBomb,
    /// An entry named `../casebook-escape.txt`.
    ParentPath,
    /// An entry named `/tmp/casebook-escape.txt`.
    AbsolutePath,
    /// An entry named `C:\casebook-escape.txt`.
    DrivePath,
    /// A symbolic link (unix mode bits in the central directory) to `/etc/passwd`.
    Symlink,
}

/// What the bomb inflates to: one literal zero, then this many 258-byte copies.
const BOMB_COPIES: u64 = 8_914_728;
pub const BOMB_INFLATED: u64 = 1 + 258 * BOMB_COPIES;
/// What the lying bomb's headers say it inflates to.
pub const LYING_SIZE: u64 = 1024;

/// `package` with the hostile entry appended (a zip written here has no zip64 records).
pub fn hostile_document(package: &[u8], what: HostileDocument) -> Vec<u8> {
    let (name, method, data, crc, size, unix_mode) = match what {
        HostileDocument::Bomb => {
            let data = zeros_deflated(BOMB_COPIES);
            let crc = crc32_of_zeros(BOMB_INFLATED);
            ("docProps/padding.bin", 8u16, data, crc, BOMB_INFLATED, None)
        }
        HostileDocument::LyingBomb => {
            let data = zeros_deflated(BOMB_COPIES);
            let crc = crc32_of_zeros(BOMB_INFLATED);
            ("docProps/padding.bin", 8u16, data, crc, LYING_SIZE, None)
        }
        HostileDocument::Symlink => {
            let target = b"/etc/passwd".to_vec();
            let crc = crc32(&target);
            let size = target.len() as u64;
            ("word/media/link", 0, target, crc, size, Some(0o120777u32))
        }
        path => {
            let name = match path {
                HostileDocument::ParentPath => "../casebook-escape.txt",
                HostileDocument::AbsolutePath => "/tmp/casebook-escape.txt",
                _ => "C:\\casebook-escape.txt",
            };
            let data = b"written outside the document\n".to_vec();
            let (crc, size) = (crc32(&data), data.len() as u64);
            (name, 0, data, crc, size, None)
        }
    };
    append_entry(package, name, method, &data, crc, size, unix_mode)
}

/// `package` with one more entry, its data as given (already compressed by `method`).
fn append_entry(
    package: &[u8],
    name: &str,
    method: u16,
    data: &[u8],
    crc: u32,
    size: u64,
    unix_mode: Option<u32>,
) -> Vec<u8> {
    let eocd = package
        .windows(4)
        .rposition(|w| w == b"PK\x05\x06")
        .expect("a zip the engine wrote ends with its directory");
    let le16 = |at: usize| u16::from_le_bytes([package[at], package[at + 1]]);
    let le32 = |at: usize| u32::from_le_bytes(package[at..at + 4].try_into().unwrap());
    let entries = le16(eocd + 10);
    let (cd_size, cd_offset) = (le32(eocd + 12) as usize, le32(eocd + 16) as usize);
    let common = |out: &mut Vec<u8>| {
        out.extend_from_slice(&20u16.to_le_bytes()); // version needed
        out.extend_from_slice(&0u16.to_le_bytes()); // flags
        out.extend_from_slice(&method.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // time
        out.extend_from_slice(&0x21u16.to_le_bytes()); // 1980-01-01
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(size as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // extra
    };
    let mut local = b"PK\x03\x04".to_vec();
    common(&mut local);
    local.extend_from_slice(name.as_bytes());
    local.extend_from_slice(data);
    let mut central = b"PK\x01\x02".to_vec();
    // Made by unix (3) when mode bits are given, else by MS-DOS (0).
    let made_by: u16 = if unix_mode.is_some() { 0x0314 } else { 20 };
    central.extend_from_slice(&made_by.to_le_bytes());
    common(&mut central);
    central.extend_from_slice(&[0; 6]); // comment length, disk, internal attributes
    central.extend_from_slice(&(unix_mode.unwrap_or(0) << 16).to_le_bytes());
    central.extend_from_slice(&(cd_offset as u32).to_le_bytes());
    central.extend_from_slice(name.as_bytes());
    let mut out = package[..cd_offset].to_vec();
    out.extend_from_slice(&local);
    out.extend_from_slice(&package[cd_offset..cd_offset + cd_size]);
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    out.extend_from_slice(&(entries + 1).to_le_bytes());
    out.extend_from_slice(&(entries + 1).to_le_bytes());
    out.extend_from_slice(&((cd_size + central.len()) as u32).to_le_bytes());
    out.extend_from_slice(&((cd_offset + local.len()) as u32).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// Bits written least significant first, as deflate packs everything but Huffman codes.
struct Bits {
    out: Vec<u8>,
    used: u32,
}

impl Bits {
    fn put(&mut self, value: u32, count: u32) {
        for i in 0..count {
            if self.used == 0 {
                self.out.push(0);
            }
            if value >> i & 1 == 1 {
                *self.out.last_mut().unwrap() |= 1 << self.used;
            }
            self.used = (self.used + 1) % 8;
        }
    }

    /// A Huffman code, most significant bit first.
    fn code(&mut self, code: u32, len: u32) {
        for i in (0..len).rev() {
            self.put(code >> i & 1, 1);
        }
    }
}

/// One dynamic-Huffman deflate block: a literal zero, `copies` copies of 258 bytes at
/// distance 1, end. The copy's length and distance codes are one bit each, both 0, so
/// the copies are zero bytes written without any work: 2 bits for 258 bytes.
fn zeros_deflated(copies: u64) -> Vec<u8> {
    let mut b = Bits {
        out: Vec::with_capacity((copies / 4 + 64) as usize),
        used: 0,
    };
    b.put(1, 1); // final block
    b.put(2, 2); // dynamic Huffman
    b.put(286 - 257, 5); // literal/length codes up to 285
    b.put(0, 5); // one distance code
    b.put(18 - 4, 4); // code-length codes, in the order below, up to symbol 1
    // Order 16,17,18,0,8,7,9,6,10,5,11,4,12,3,13,2,14,1: 18 has length 1, 2 and 1 length 2.
    for len in [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2] {
        b.put(len, 3);
    }
    // Code-length codes: 18 → 0, 1 → 10, 2 → 11.
    let (one, two) = ((0b10, 2), (0b11, 2));
    let zeros = |b: &mut Bits, n: u32| {
        b.code(0, 1);
        b.put(n - 11, 7);
    };
    b.code(two.0, two.1); // literal 0: length 2
    zeros(&mut b, 138);
    zeros(&mut b, 117); // literals 1..=255 unused
    b.code(two.0, two.1); // 256, end of block: length 2
    zeros(&mut b, 28); // 257..=284 unused
    b.code(one.0, one.1); // 285, length 258: length 1
    b.code(one.0, one.1); // distance code 0 (distance 1): length 1
    // Literal/length codes: 285 → 0, 0 → 10, 256 → 11; distance 0 → 0.
    b.code(0b10, 2);
    let whole = copies * 2;
    for _ in 0..whole % 8 {
        b.put(0, 1);
    }
    // Eight zero bits at a time are a zero byte, whatever the bit position: the
    // partial byte is finished by the first of them and the position carries on.
    b.out.resize(b.out.len() + (whole / 8) as usize, 0);
    b.code(0b11, 2);
    b.out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                crc >> 1 ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// CRC-32 of `n` zero bytes without reading them: a zero byte is a linear map of the
/// register, raised to the n-th power by squaring (zlib's `crc32_combine` idea).
fn crc32_of_zeros(n: u64) -> u32 {
    type M = [u32; 32];
    let apply =
        |m: &M, v: u32| (0..32).fold(0, |acc, i| if v >> i & 1 == 1 { acc ^ m[i] } else { acc });
    let mul = |a: &M, b: &M| -> M { std::array::from_fn(|i| apply(a, b[i])) };
    let mut byte: M = std::array::from_fn(|i| {
        let mut crc = 1u32 << i;
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                crc >> 1 ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
        crc
    });
    let mut state = !0u32;
    let mut n = n;
    while n > 0 {
        if n & 1 == 1 {
            state = apply(&byte, state);
        }
        byte = mul(&byte, &byte);
        n >>= 1;
    }
    !state
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bomb_inflates_to_the_zeros_it_declares() {
        let mut empty = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        empty
            .start_file("a.txt", zip::write::SimpleFileOptions::default())
            .unwrap();
        let package = empty.finish().unwrap().into_inner();
        let copies = 1000;
        let size = 1 + 258 * copies;
        let bomb = append_entry(
            &package,
            "zeros",
            8,
            &zeros_deflated(copies),
            crc32_of_zeros(size),
            size,
            None,
        );
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bomb)).unwrap();
        assert_eq!(zip.len(), 2);
        let mut out = Vec::new();
        // Reading to the end checks the CRC too.
        std::io::Read::read_to_end(&mut zip.by_name("zeros").unwrap(), &mut out).unwrap();
        assert_eq!(out.len() as u64, size);
        assert!(out.iter().all(|&b| b == 0));
        let big = zeros_deflated(BOMB_COPIES);
        assert!(big.len() < 2_300_000, "{}", big.len());
    }

    #[test]
    fn zeros_have_the_crc_of_their_bytes() {
        for n in [0u64, 1, 7, 258, 1000, 65_537] {
            assert_eq!(crc32_of_zeros(n), crc32(&vec![0; n as usize]), "{n}");
        }
    }
}
