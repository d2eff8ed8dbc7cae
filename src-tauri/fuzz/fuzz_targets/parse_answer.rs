//! The parse-answer reader never fails and never panics, whatever the service sent.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = casebook_core::citations::client::read_parse_answer(data);
});
