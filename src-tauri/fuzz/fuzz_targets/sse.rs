//! The SSE decoder: the same bytes whole and in random chunks give the same events,
//! the same resume id and retry, and the same limit verdict; nothing panics.
#![no_main]
use casebook_core::missions::protocol::sse::{SseDecoder, SseEvent};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

struct Outcome {
    events: Vec<SseEvent>,
    exceeded: bool,
    last_id: Option<String>,
    retry: Option<u64>,
    comments: u64,
}

fn decode<'a>(limit: Option<usize>, chunks: impl IntoIterator<Item = &'a [u8]>) -> Outcome {
    let mut d = limit.map_or_else(SseDecoder::new, SseDecoder::with_limit);
    let mut events = Vec::new();
    let mut exceeded = false;
    for chunk in chunks {
        exceeded |= d.try_feed_with(chunk, |e| events.push(e)).is_err();
    }
    let out = Outcome {
        events,
        exceeded,
        last_id: d.committed_id().map(str::to_owned),
        retry: d.retry(),
        comments: d.comments(),
    };
    // A second connection after finish() must decode as well.
    d.finish();
    d.feed(b"data: after\n\n");
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, data)) = data.split_first() else {
        return;
    };
    let (mut splits, input) = common::Splits::take(data);
    // Half the runs without a limit, half with one small enough to be reached.
    let limit = (sel & 1 == 1).then_some(usize::from(sel >> 1));
    let whole = decode(limit, [input]);
    let chunked = decode(limit, splits.chunks(input));
    assert_eq!(whole.events, chunked.events, "events differ by chunking");
    assert_eq!(whole.exceeded, chunked.exceeded, "limit verdict differs");
    if !whole.exceeded {
        assert_eq!(whole.last_id, chunked.last_id);
        assert_eq!(whole.retry, chunked.retry);
        assert_eq!(whole.comments, chunked.comments);
    }
    if let Some(limit) = limit {
        // The limit counts bytes received; a byte that is not UTF-8 becomes U+FFFD, three.
        for e in &whole.events {
            assert!(e.data.len() <= 3 * limit, "event data past the limit");
        }
    }
});
