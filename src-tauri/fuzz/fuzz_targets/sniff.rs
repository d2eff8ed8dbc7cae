//! Document sniffing: any bytes give a kind or an error, never a panic; a kind found
//! is stable.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let a = casebook_core::citations::documents::sniff(data).ok();
    let b = casebook_core::citations::documents::sniff(data).ok();
    assert_eq!(a, b);
});
