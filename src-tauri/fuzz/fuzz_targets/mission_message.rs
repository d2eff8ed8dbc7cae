//! The sandbox's mission message parser, on any text.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = casebook_sandbox::fuzzing::check_message(text);
    }
});
