//! The sandbox's cite/parse request body checks and, for a file, the engine's parse.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = casebook_sandbox::fuzzing::check_request(data);
});
