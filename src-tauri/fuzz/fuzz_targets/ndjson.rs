//! The watcher's NDJSON framing: whole and chunked input give the same events (or the
//! same refusal); nothing panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let (mut splits, input) = common::Splits::take(data);
    let whole = casebook_core::missions::stream::ndjson_events([input]);
    let chunked = casebook_core::missions::stream::ndjson_events(splits.chunks(input));
    match (whole, chunked) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "events differ by chunking"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("whole {:?} but chunked {:?}", a.is_ok(), b.is_ok()),
    }
});
