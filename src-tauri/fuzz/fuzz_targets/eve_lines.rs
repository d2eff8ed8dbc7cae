//! eve's NDJSON lines in every generation: whole and chunked input give the same records
//! (stored lines with their events, transport records) or the same refusal; nothing panics.
#![no_main]
use casebook_core::missions::protocol::ndjson::{Generation, LineReader};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fn read<'a>(g: Generation, chunks: impl IntoIterator<Item = &'a [u8]>) -> Result<Vec<casebook_core::missions::protocol::ndjson::Record>, ()> {
    let mut reader = LineReader::new(g);
    let mut out = Vec::new();
    for c in chunks {
        reader.feed(c, &mut out).map_err(|_| ())?;
    }
    reader.finish(&mut out);
    Ok(out)
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, data)) = data.split_first() else { return };
    // The first byte picks the generation the header named.
    let g = if pick % 2 == 0 { Generation::Lines } else { Generation::Events(Some(26)) };
    let (mut splits, input) = common::Splits::take(data);
    let whole = read(g, [input]);
    let chunked = read(g, splits.chunks(input));
    assert_eq!(whole, chunked, "records differ by chunking");
});
