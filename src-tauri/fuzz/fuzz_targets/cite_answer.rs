//! The cite answer read as it arrives: whole and chunked input give the same document
//! and extras (or the same kind of refusal), a document is only what serde and base64
//! read from the whole answer, and nothing panics.
#![no_main]
use base64::Engine as _;
use casebook_core::citations::transfer::CiteAnswerDecoder;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

type Read = Result<(Vec<u8>, serde_json::Map<String, serde_json::Value>), casebook_core::ErrorCode>;

fn read<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Read {
    let mut d = CiteAnswerDecoder::new(Vec::new(), 1 << 20);
    for c in chunks {
        d.feed(c).map_err(|e| e.code())?;
    }
    d.finish()
        .map(|(out, _, extra)| (out, extra))
        .map_err(|e| e.code())
}

fuzz_target!(|data: &[u8]| {
    let (mut splits, input) = common::Splits::take(data);
    let whole = read([input]);
    let chunked = read(splits.chunks(input));
    assert_eq!(whole, chunked, "the reading differs by chunking");
    if let Ok((doc, _)) = &whole {
        // Whatever is accepted is a JSON object whose documentBase64 is that document
        // (white space inside the base64 aside, which the streamed reading skips).
        // serde_json with `raw_value` (on in this build) will not read an object holding
        // its private RawValue token as a key into a Value; the JSON is valid all the same
        // and the decoder right to take it (core/tests/fuzz_seams.rs keeps the case).
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(input) else {
            const TOKEN: &[u8] = b"$serde_json::private::";
            assert!(
                input.windows(TOKEN.len()).any(|w| w == TOKEN),
                "accepted, so JSON"
            );
            return;
        };
        let b64: String = v["documentBase64"]
            .as_str()
            .expect("accepted, so a string")
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("accepted, so base64");
        assert_eq!(&decoded, doc);
    }
});
