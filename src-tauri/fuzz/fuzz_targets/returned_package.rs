//! The checks a document returned by the citation service passes before it is saved:
//! any bytes are accepted or refused without a panic, and never inflated past the bound.
//! The first byte picks a small bound for the counted inflation (0: the real one), so
//! the fuzzer reaches the cut on real bytes; what passes the checks is a document the
//! drop's own check agrees on, and Casebook's reader reads it or says why not.
#![no_main]
use casebook_core::citations::documents::{self, MAX_INFLATED_BYTES};
use casebook_core::citations::{reader, returned};
use libfuzzer_sys::fuzz_target;
use std::io::Cursor;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let bound = match pick {
        0 => MAX_INFLATED_BYTES,
        n => u64::from(n) * 4096,
    };
    if let Ok(n) = returned::inflate_all(Cursor::new(bytes), bound) {
        assert!(n <= bound, "inflated past the bound");
    }
    if let Ok(kind) = returned::check(bytes) {
        assert_eq!(
            documents::sniff(bytes).ok(),
            Some(kind),
            "the drop's check agrees"
        );
        let _ = reader::read(bytes);
    }
});
