//! A Server-Sent Events decoder that follows the WHATWG HTML "event stream interpretation"
//! rules (<https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>).
//!
//! The decoder is fed raw bytes in whatever chunks the transport delivers. It never needs a
//! chunk to end on a line, a UTF-8 character or a CRLF boundary. Lines are interpreted in
//! place in the chunk; only a line that straddles two chunks is copied, to join its halves.
//!
//! ### Decisions the spec leaves to us
//!
//! * [`SseEvent::id`] is `None` until the stream has set an id, and `Some("")` once the
//!   server has reset it with an empty `id` field. The spec's `lastEventId` string is
//!   `id.as_deref().unwrap_or("")`; keeping the two apart lets a caller tell "this server
//!   never sends ids" from "the server cleared the id".
//! * [`SseDecoder::last_event_id`] is the id committed by the last blank line, the value an
//!   EventSource would send as `Last-Event-ID` on reconnect. An `id` field in an event that
//!   never gets its blank line is not committed.
//! * A `retry` value too large for `u64` saturates at `u64::MAX` instead of being ignored: it
//!   is all digits, so the spec says to honour it.
//! * After [`SseDecoder::finish`] the decoder accepts the next connection's body: a leading
//!   BOM is stripped again, while the last event id, the retry value and the comment count
//!   carry over, as they do for an EventSource that reconnects.
//! * [`SseEvent::has_id_field`] says whether the event's own lines carried an accepted `id`
//!   field. The spec gives every event the last event id, so without this flag an event the
//!   server sent without an id looks like a repeat of the one before it.
//! * A decoder may be given a byte limit ([`SseDecoder::with_limit`]) for one line and for one
//!   event's data. Past it the decoder stops and [`SseDecoder::try_feed_with`] reports
//!   [`LimitExceeded`]: a stream from an untrusted server must not make it buffer without
//!   end. Comment lines are never buffered, so they need no limit.

use std::mem;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Past this capacity a buffer is handed over (or dropped) instead of being kept for reuse, so
/// one huge event or line does not pin its memory for the rest of the stream.
const RETAINED_CAPACITY: usize = 64 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The last event id at dispatch time. `None` if no `id` field has been accepted yet;
    /// `Some("")` after an explicit empty `id` field. Persists across events.
    pub id: Option<String>,
    /// The event type; `"message"` when the event had no (or an empty) `event` field.
    pub event: String,
    /// The `data` lines joined with `\n`.
    pub data: String,
    /// Whether this event's own lines set `id` (an accepted `id` field since the previous
    /// blank line). When false, `id` is only inherited from an earlier event.
    pub has_id_field: bool,
}

/// A line or an event's data grew past the decoder's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitExceeded {
    /// `"line"` or `"event data"`.
    pub what: &'static str,
    /// The limit in bytes.
    pub limit: usize,
}

impl std::fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "one {} is longer than {} bytes", self.what, self.limit)
    }
}

impl std::error::Error for LimitExceeded {}

/// Incremental event-stream decoder. See the module documentation for the rules it follows.
#[derive(Debug)]
pub struct SseDecoder {
    /// The start of a line whose end has not arrived yet.
    line: Vec<u8>,
    data: String,
    event_type: String,
    /// The spec's "last event ID buffer"; `None` until an `id` field is accepted.
    id_buffer: Option<String>,
    /// Set when `id_buffer` changed since the last blank line, so unchanged ids cost no copy.
    id_dirty: bool,
    /// The id committed by the last blank line.
    last_event_id: Option<String>,
    retry: Option<u64>,
    comments: u64,
    /// The previous chunk ended in CR, so an LF opening the next chunk ends no line.
    pending_cr: bool,
    /// The first bytes of the stream have been checked for a BOM.
    bom_checked: bool,
    /// How many BOM bytes the stream has started with so far, while `bom_checked` is false.
    bom_matched: u8,
    /// Bytes allowed in one line and in one event's data.
    limit: usize,
    /// Set once the limit was passed; the decoder then ignores further input.
    exceeded: Option<LimitExceeded>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self {
            line: Vec::new(),
            data: String::new(),
            event_type: String::new(),
            id_buffer: None,
            id_dirty: false,
            last_event_id: None,
            retry: None,
            comments: 0,
            pending_cr: false,
            bom_checked: false,
            bom_matched: 0,
            limit: usize::MAX,
            exceeded: None,
        }
    }
}

impl SseDecoder {
    /// A decoder without a size limit, for input of known size.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that refuses a line, or an event's data, longer than `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        Self {
            limit,
            ..Self::default()
        }
    }

    /// The limit given to [`Self::with_limit`]; `usize::MAX` for none.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Feeds bytes, handing each completed event to `on_event` in order, and fails once a
    /// line or an event's data passes the limit. Events completed before that point have
    /// been handed over; nothing after it is decoded, on this call or later ones.
    pub fn try_feed_with(
        &mut self,
        chunk: &[u8],
        on_event: impl FnMut(SseEvent),
    ) -> Result<(), LimitExceeded> {
        self.feed_with(chunk, on_event);
        match self.exceeded {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Why the decoder stopped, if a limit stopped it.
    pub fn exceeded(&self) -> Option<LimitExceeded> {
        self.exceeded
    }

    /// Feeds bytes; returns the events completed by them, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        self.feed_with(chunk, |event| events.push(event));
        events
    }

    /// Feeds bytes, handing each completed event to `on_event` in order. Past a limit set with
    /// [`Self::with_limit`] it decodes nothing more; [`Self::try_feed_with`] reports that.
    pub fn feed_with(&mut self, chunk: &[u8], mut on_event: impl FnMut(SseEvent)) {
        if self.exceeded.is_some() {
            return;
        }
        let mut rest = chunk;
        if !self.bom_checked {
            // A BOM split across chunks must still be recognised, so its first bytes are held
            // back until the third arrives or a byte shows it is not a BOM.
            while let Some((&byte, tail)) = rest.split_first() {
                let matched = usize::from(self.bom_matched);
                if byte != BOM[matched] {
                    self.line.extend_from_slice(&BOM[..matched]);
                    self.bom_checked = true;
                    break;
                }
                rest = tail;
                self.bom_matched += 1;
                if usize::from(self.bom_matched) == BOM.len() {
                    self.bom_checked = true;
                    break;
                }
            }
            if !self.bom_checked {
                return;
            }
        }
        if self.pending_cr {
            match rest.first() {
                // An empty chunk says nothing about whether an LF follows.
                None => return,
                Some(&b'\n') => rest = &rest[1..],
                Some(_) => {}
            }
            self.pending_cr = false;
        }
        while let Some(end) = find_line_end(rest) {
            if self.line.is_empty() {
                self.process_line(&rest[..end], &mut on_event);
            } else {
                self.stash(&rest[..end]);
                if self.exceeded.is_some() {
                    return;
                }
                let line = mem::take(&mut self.line);
                self.process_line(&line, &mut on_event);
                self.line = line;
                self.line.clear();
                if self.line.capacity() > RETAINED_CAPACITY {
                    self.line = Vec::new();
                }
            }
            if self.exceeded.is_some() {
                return;
            }
            let next = if rest[end] == b'\r' {
                match rest.get(end + 1) {
                    Some(&b'\n') => end + 2,
                    Some(_) => end + 1,
                    None => {
                        self.pending_cr = true;
                        end + 1
                    }
                }
            } else {
                end + 1
            };
            rest = &rest[next..];
        }
        self.stash(rest);
    }

    /// The stream ended. An event without its terminating blank line is dropped, as the spec
    /// requires, and so is an `id` it set. The decoder is then ready for the next connection.
    pub fn finish(&mut self) {
        self.line = Vec::new();
        self.data.clear();
        self.event_type.clear();
        self.id_buffer.clone_from(&self.last_event_id);
        self.id_dirty = false;
        self.pending_cr = false;
        self.bom_checked = false;
        self.bom_matched = 0;
    }

    /// An event (or a line) has begun and not been dispatched: a stream that ends here was
    /// cut inside it.
    pub fn mid_event(&self) -> bool {
        !self.line.is_empty() || !self.data.is_empty() || !self.event_type.is_empty()
    }

    /// The last event id committed by a blank line; `""` if none was ever set.
    pub fn last_event_id(&self) -> &str {
        self.last_event_id.as_deref().unwrap_or("")
    }

    /// Like [`Self::last_event_id`], but `None` until a blank line has committed an `id`
    /// field, so a caller can tell "no id yet" from "the server cleared it".
    pub fn committed_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The last valid `retry:` value, in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Comment lines (lines starting with `:`) seen so far; a server's heartbeats show up here.
    pub fn comments(&self) -> u64 {
        self.comments
    }

    /// Keeps the unfinished tail of a chunk until its line ends.
    fn stash(&mut self, part: &[u8]) {
        // A comment's text is never used, so an endless comment line costs one byte.
        match self.line.first() {
            Some(&b':') => {}
            None if part.first() == Some(&b':') => self.line.push(b':'),
            _ if self.line.len() + part.len() > self.limit => self.exceed("line"),
            _ => self.line.extend_from_slice(part),
        }
    }

    #[cold]
    fn exceed(&mut self, what: &'static str) {
        self.exceeded = Some(LimitExceeded {
            what,
            limit: self.limit,
        });
        self.line = Vec::new();
        self.data = String::new();
    }

    fn process_line(&mut self, line: &[u8], on_event: &mut impl FnMut(SseEvent)) {
        if line.is_empty() {
            self.dispatch(on_event);
            return;
        }
        if line.len() > self.limit && line[0] != b':' {
            self.exceed("line");
            return;
        }
        // Splitting the raw bytes at ':' matches splitting the decoded text: a UTF-8 decoder
        // never folds an ASCII byte into a replacement character.
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => {
                self.comments += 1;
                return;
            }
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" => {
                if self.data.len() + value.len() > self.limit {
                    self.exceed("event data");
                    return;
                }
                push_lossy(&mut self.data, value);
                self.data.push('\n');
            }
            b"event" => {
                self.event_type.clear();
                push_lossy(&mut self.event_type, value);
            }
            b"id" if !value.contains(&0) => {
                let id = self.id_buffer.get_or_insert_with(String::new);
                id.clear();
                push_lossy(id, value);
                self.id_dirty = true;
            }
            b"retry" => {
                if let Some(ms) = parse_retry(value) {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(SseEvent)) {
        // The spec commits the id at every blank line, even one that dispatches nothing.
        let has_id_field = mem::take(&mut self.id_dirty);
        if has_id_field {
            self.last_event_id.clone_from(&self.id_buffer);
        }
        if self.data.is_empty() {
            self.event_type.clear();
            return;
        }
        // Every data line appended an LF; the spec drops the last one.
        self.data.pop();
        let data = if self.data.capacity() > RETAINED_CAPACITY {
            mem::take(&mut self.data)
        } else {
            // Copying keeps the buffer's capacity for the next event: one exact allocation
            // instead of regrowing from empty.
            let data = self.data.as_str().to_owned();
            self.data.clear();
            data
        };
        let event = if self.event_type.is_empty() {
            String::from("message")
        } else {
            mem::take(&mut self.event_type)
        };
        on_event(SseEvent {
            id: self.last_event_id.clone(),
            event,
            data,
            has_id_field,
        });
    }
}

/// Appends `bytes` decoded as UTF-8, with U+FFFD for each maximal invalid subsequence (the
/// WHATWG decoder's replacement behaviour, which is also `String::from_utf8_lossy`'s).
fn push_lossy(out: &mut String, bytes: &[u8]) {
    if let Ok(text) = std::str::from_utf8(bytes) {
        out.push_str(text);
        return;
    }
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
}

/// The spec takes a `retry` value only if it is ASCII digits; an empty value has none to take.
fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(value.iter().fold(0u64, |ms, &digit| {
        ms.saturating_mul(10)
            .saturating_add(u64::from(digit - b'0'))
    }))
}

/// The index of the first CR or LF, eight bytes at a time.
fn find_line_end(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const LFS: u64 = u64::from_ne_bytes([b'\n'; 8]);
    const CRS: u64 = u64::from_ne_bytes([b'\r'; 8]);
    let mut words = bytes.chunks_exact(8);
    let mut offset = 0;
    for word in words.by_ref() {
        let word = u64::from_le_bytes(word.try_into().expect("chunks_exact yields 8 bytes"));
        let lf = word ^ LFS;
        let cr = word ^ CRS;
        // The classic "has a zero byte" test. It can flag a byte above a real zero byte, never
        // one below it, so the lowest flagged byte is always a real CR or LF.
        let found = (lf.wrapping_sub(ONES) & !lf | cr.wrapping_sub(ONES) & !cr) & HIGHS;
        if found != 0 {
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map(|i| offset + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: Option<&str>, event: &str, data: &str) -> SseEvent {
        SseEvent {
            id: id.map(str::to_owned),
            event: event.to_owned(),
            data: data.to_owned(),
            has_id_field: false,
        }
    }

    /// An event whose own lines set its id.
    fn own(id: &str, data: &str) -> SseEvent {
        SseEvent {
            has_id_field: true,
            ..event(Some(id), "message", data)
        }
    }

    fn message(data: &str) -> SseEvent {
        event(None, "message", data)
    }

    fn feed_all(decoder: &mut SseDecoder, chunks: &[&[u8]]) -> Vec<SseEvent> {
        chunks.iter().flat_map(|c| decoder.feed(c)).collect()
    }

    #[test]
    fn cr_at_chunk_end_and_lf_at_next_start_are_one_line_ending() {
        let mut d = SseDecoder::new();
        let events = feed_all(&mut d, &[b"data: a\r", b"\ndata: b\r", b"\n", b"\r", b"\n"]);
        assert_eq!(events, vec![message("a\nb")]);
    }

    #[test]
    fn cr_at_chunk_end_followed_by_other_byte_ends_the_line() {
        let mut d = SseDecoder::new();
        let events = feed_all(&mut d, &[b"data: a\r", b"data: b\r", b"\r"]);
        assert_eq!(events, vec![message("a\nb")]);
    }

    #[test]
    fn empty_chunk_between_cr_and_lf_keeps_them_together() {
        let mut d = SseDecoder::new();
        let events = feed_all(&mut d, &[b"data: a\r", b"", b"\ndata: b\n\n"]);
        assert_eq!(events, vec![message("a\nb")]);
    }

    #[test]
    fn blank_cr_line_split_from_its_lf_dispatches_once() {
        let mut d = SseDecoder::new();
        let events = feed_all(&mut d, &[b"data: one\r", b"\r", b"\n", b"data: two\n\n"]);
        assert_eq!(events, vec![message("one"), message("two")]);
    }

    #[test]
    fn bom_split_across_chunks_is_stripped() {
        let mut d = SseDecoder::new();
        let events = feed_all(&mut d, &[b"", b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]);
        assert_eq!(events, vec![message("x")]);
    }

    #[test]
    fn partial_bom_is_kept_as_line_bytes() {
        // Were the held-back EF BB dropped, the line would read `data:x`.
        let mut d = SseDecoder::new();
        let events = feed_all(&mut d, &[b"\xEF\xBB", b"data:x\n\ndata:y\n\n"]);
        assert_eq!(events, vec![message("y")]);
    }

    #[test]
    fn bom_after_the_start_is_not_stripped() {
        let mut d = SseDecoder::new();
        let events = feed_all(&mut d, &[b"\n", b"\xEF\xBB\xBFdata: x\n\ndata: y\n\n"]);
        assert_eq!(events, vec![message("y")]);
    }

    #[test]
    fn bom_is_stripped_again_after_finish() {
        let mut d = SseDecoder::new();
        assert_eq!(d.feed(b"\xEF\xBB\xBFdata: a\n\n"), vec![message("a")]);
        d.finish();
        assert_eq!(d.feed(b"\xEF\xBB\xBFdata: b\n\n"), vec![message("b")]);
    }

    #[test]
    fn id_with_nul_is_ignored_and_the_previous_id_kept() {
        let mut d = SseDecoder::new();
        let events = d.feed(b"id: 1\nid: a\0b\ndata: x\n\nid: \0\ndata: y\n\n");
        assert_eq!(
            events,
            vec![own("1", "x"), event(Some("1"), "message", "y")]
        );
        assert_eq!(d.last_event_id(), "1");
    }

    #[test]
    fn id_is_none_until_set_then_persists_and_can_be_reset() {
        let mut d = SseDecoder::new();
        let events = d.feed(b"data: a\n\nid: 7\ndata: b\n\ndata: c\n\nid\ndata: d\n\n");
        assert_eq!(
            events,
            vec![
                event(None, "message", "a"),
                own("7", "b"),
                event(Some("7"), "message", "c"),
                own("", "d"),
            ]
        );
        assert_eq!(d.last_event_id(), "");
    }

    #[test]
    fn only_an_event_with_its_own_id_field_says_so() {
        let mut d = SseDecoder::new();
        let events = d.feed(b"id: 1\ndata: a\n\ndata: b\n\nid: 2\n\ndata: c\n\n");
        let own: Vec<(bool, Option<&str>)> = events
            .iter()
            .map(|e| (e.has_id_field, e.id.as_deref()))
            .collect();
        assert_eq!(
            own,
            vec![(true, Some("1")), (false, Some("1")), (false, Some("2"))],
            "b and c inherit an id; only a carried one"
        );
        assert_eq!(d.committed_id(), Some("2"));
        assert_eq!(SseDecoder::new().committed_id(), None);
    }

    #[test]
    fn a_line_or_data_past_the_limit_stops_the_decoder() {
        // One long line across chunks.
        let mut d = SseDecoder::with_limit(16);
        assert_eq!(d.try_feed_with(b"data: 0123456", |_| {}), Ok(()));
        let err = d.try_feed_with(b"789abcdef\n\n", |_| {}).unwrap_err();
        assert_eq!(err.what, "line");
        assert!(d.line.capacity() == 0, "the buffer is released");
        assert!(d.try_feed_with(b"data: x\n\n", |_| panic!()).is_err());
        // One long line inside one chunk.
        let mut d = SseDecoder::with_limit(16);
        let err = d.try_feed_with(b"event: 0123456789abcdef\n", |_| {});
        assert_eq!(err.unwrap_err().what, "line");
        // Many short data lines making one long event; the event before it still arrives.
        let mut d = SseDecoder::with_limit(16);
        let mut got = Vec::new();
        let err = d
            .try_feed_with(
                b"data: ok\n\ndata: 12345\ndata: 12345\ndata: 12345\n",
                |e| got.push(e.data),
            )
            .unwrap_err();
        assert_eq!((err.what, got), ("event data", vec!["ok".to_owned()]));
        // Exactly at the limit is fine, and comments of any length cost nothing.
        let mut d = SseDecoder::with_limit(16);
        let mut got = Vec::new();
        d.try_feed_with(b"data:0123456789a\n\n:", |e| got.push(e.data))
            .unwrap();
        d.try_feed_with(&[b'x'; 100], |_| {}).unwrap();
        d.try_feed_with(b"\ndata: 0123456789\ndata: 1234\n\n", |e| got.push(e.data))
            .unwrap();
        assert_eq!(got, vec!["0123456789a", "0123456789\n1234"]);
    }

    #[test]
    fn id_is_committed_by_the_blank_line_even_without_data() {
        let mut d = SseDecoder::new();
        d.feed(b"id: 5\n");
        assert_eq!(d.last_event_id(), "");
        d.feed(b"\n");
        assert_eq!(d.last_event_id(), "5");
    }

    #[test]
    fn retry_takes_only_ascii_digits() {
        let mut d = SseDecoder::new();
        d.feed(b"retry: 1000\n");
        assert_eq!(d.retry(), Some(1000));
        for bogus in [
            &b"retry: 10 00\n"[..],
            b"retry: -1\n",
            b"retry: 1e3\n",
            b"retry: 12ms\n",
            b"retry:  5\n",
            b"retry: \xD9\xA1\n",
            b"retry:\n",
            b"retry\n",
        ] {
            d.feed(bogus);
            assert_eq!(
                d.retry(),
                Some(1000),
                "{:?}",
                String::from_utf8_lossy(bogus)
            );
        }
        d.feed(b"retry:0\n");
        assert_eq!(d.retry(), Some(0));
        d.feed(b"retry: 99999999999999999999999\n");
        assert_eq!(d.retry(), Some(u64::MAX));
    }

    #[test]
    fn unterminated_last_event_is_dropped() {
        let mut d = SseDecoder::new();
        assert_eq!(d.feed(b"data: a\n\nid: 9\ndata: b\n"), vec![message("a")]);
        d.finish();
        assert_eq!(d.last_event_id(), "");
        // The next connection starts clean: neither `b` nor the id 9 come back.
        assert_eq!(d.feed(b"\ndata: c\n\n"), vec![message("c")]);
    }

    #[test]
    fn unterminated_line_is_dropped_by_finish() {
        let mut d = SseDecoder::new();
        d.feed(b"data: a\n\ndata: b");
        d.finish();
        assert_eq!(d.feed(b"\n\n"), vec![]);
    }

    #[test]
    fn event_without_data_is_not_dispatched_and_its_type_is_reset() {
        let mut d = SseDecoder::new();
        assert_eq!(d.feed(b"event: x\n\n"), vec![]);
        assert_eq!(d.feed(b"data: y\n\n"), vec![message("y")]);
        assert_eq!(
            d.feed(b"event: z\ndata: w\n\n"),
            vec![event(None, "z", "w")]
        );
    }

    #[test]
    fn multibyte_utf8_split_across_chunks() {
        let text = "data: é€😀\n\n".as_bytes();
        let mut d = SseDecoder::new();
        let events: Vec<_> = text
            .iter()
            .flat_map(|b| d.feed(std::slice::from_ref(b)))
            .collect();
        assert_eq!(events, vec![message("é€😀")]);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let mut d = SseDecoder::new();
        let events = feed_all(&mut d, &[b"data: a\xF0\x9F", b"b\xFF\n\n"]);
        assert_eq!(events, vec![message("a\u{FFFD}b\u{FFFD}")]);
    }

    #[test]
    fn comments_are_counted_and_long_ones_are_not_buffered() {
        let mut d = SseDecoder::new();
        d.feed(b": ping\n:");
        d.feed(&[b'x'; 10_000]);
        assert_eq!(d.line.len(), 1);
        d.feed(b"\r\n:\rdata: x\n\n");
        assert_eq!(d.comments(), 3);
    }

    #[test]
    fn feed_with_sees_the_same_events_as_feed() {
        let input = b"event: a\ndata: 1\n\ndata: 2\n\n";
        let mut seen = Vec::new();
        SseDecoder::new().feed_with(input, |e| seen.push(e));
        assert_eq!(seen, SseDecoder::new().feed(input));
        assert_eq!(seen.len(), 2);
    }

    /// The spec's algorithm written the slow, obvious way: decode the whole stream, split it
    /// into lines, interpret them.
    fn reference(stream: &[u8]) -> (Vec<SseEvent>, Option<u64>, String, u64) {
        let text = String::from_utf8_lossy(stream);
        let mut text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
        let mut lines = Vec::new();
        while let Some(end) = text.find(['\r', '\n']) {
            lines.push(&text[..end]);
            let skip = if text[end..].starts_with("\r\n") {
                2
            } else {
                1
            };
            text = &text[end + skip..];
        }
        let (mut events, mut retry, mut comments) = (Vec::new(), None, 0);
        let (mut data, mut event_type) = (String::new(), String::new());
        let (mut id, mut committed): (Option<String>, Option<String>) = (None, None);
        let mut id_since_blank = false;
        for line in lines {
            if line.is_empty() {
                committed.clone_from(&id);
                let has_id_field = std::mem::take(&mut id_since_blank);
                if !data.is_empty() {
                    data.pop();
                    let name = if event_type.is_empty() {
                        "message"
                    } else {
                        &event_type
                    };
                    events.push(SseEvent {
                        id: committed.clone(),
                        event: name.to_owned(),
                        data: data.clone(),
                        has_id_field,
                    });
                }
                data.clear();
                event_type.clear();
            } else if line.starts_with(':') {
                comments += 1;
            } else {
                let (field, value) = match line.split_once(':') {
                    Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                    None => (line, ""),
                };
                match field {
                    "data" => data.push_str(&format!("{value}\n")),
                    "event" => event_type = value.to_owned(),
                    "id" if !value.contains('\0') => {
                        id = Some(value.to_owned());
                        id_since_blank = true;
                    }
                    "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                        retry = value.parse().ok().or(Some(u64::MAX));
                    }
                    _ => {}
                }
            }
        }
        let last = committed.unwrap_or_default();
        (events, retry, last, comments)
    }

    #[test]
    fn random_streams_in_random_chunks_match_the_reference() {
        const PIECES: &[&[u8]] = &[
            b"data",
            b"event",
            b"id",
            b"retry",
            b":",
            b": ",
            b" ",
            b"\r",
            b"\n",
            b"\r\n",
            b"x",
            b"42",
            b"\0",
            b"\xEF\xBB\xBF",
            b"\xEF",
            b"\xC3\xA9",
            b"\xF0\x9F\x98\x80",
            b"\xFF",
            b"\xE2\x82",
            b"data: ",
            b"\n\n",
        ];
        // xorshift64: deterministic, so a failure reproduces.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as usize
        };
        for _ in 0..3000 {
            let mut stream = Vec::new();
            for _ in 0..next(40) {
                stream.extend_from_slice(PIECES[next(PIECES.len())]);
            }
            let mut decoder = SseDecoder::new();
            let mut events = Vec::new();
            let mut rest = stream.as_slice();
            while !rest.is_empty() {
                let (chunk, tail) =
                    rest.split_at(next(rest.len().min(6)) + usize::from(next(4) > 0));
                decoder.feed_with(chunk, |e| events.push(e));
                rest = tail;
            }
            let got = (
                events,
                decoder.retry(),
                decoder.last_event_id().to_owned(),
                decoder.comments(),
            );
            assert_eq!(
                got,
                reference(&stream),
                "stream {:?}",
                String::from_utf8_lossy(&stream)
            );
        }
    }

    #[test]
    fn find_line_end_agrees_with_a_plain_scan() {
        let mut bytes = vec![b'a'; 40];
        for at in 0..40 {
            for eol in [b'\r', b'\n'] {
                bytes[at] = eol;
                for start in 0..=at {
                    assert_eq!(find_line_end(&bytes[start..]), Some(at - start));
                }
                bytes[at] = b'a';
            }
        }
        assert_eq!(find_line_end(&bytes), None);
        // Bytes that differ from CR or LF by one bit, or sit next to them, must not match.
        let near = [0x0B, 0x0C, 0x0E, 0x09, 0x8A, 0x8D, 0x00, 0xFF, 0x1A, 0x2D];
        assert_eq!(find_line_end(&near.repeat(3)), None);
    }
}
