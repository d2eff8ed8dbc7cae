//! The entry points `src-tauri/fuzz` drives, checked on its committed seeds in every
//! `make test`, so a seam that stops meaning what the fuzzer assumes fails here first.
//! (Inputs the fuzzer finds crashing belong here too, each with the bug it showed.)

use casebook_core::missions::stream::ndjson_events;
use std::path::Path;

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/seeds")
        .join(target);
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert!(!out.is_empty());
    out.sort();
    out
}

#[test]
fn ndjson_framing_gives_the_same_events_however_the_bytes_are_split() {
    for seed in seeds("ndjson") {
        // The fuzz target's first 8 bytes choose the split; here every split point.
        let input = &seed[8..];
        let whole = ndjson_events([input]).unwrap();
        assert!(!whole.is_empty());
        let bytes = ndjson_events(input.chunks(1)).unwrap();
        assert_eq!(whole, bytes);
        for cut in 0..=input.len() {
            let (a, b) = input.split_at(cut);
            assert_eq!(ndjson_events([a, b]).unwrap(), whole, "split at {cut}");
        }
    }
}

#[test]
fn an_oversized_ndjson_line_is_refused_whole_or_in_pieces() {
    let line = vec![b'x'; casebook_core::missions::stream::MAX_EVENT_BYTES + 1];
    assert!(ndjson_events([&line[..]]).is_err());
    assert!(ndjson_events(line.chunks(64 * 1024)).is_err());
}

#[test]
fn the_sandbox_parsers_accept_their_valid_seeds() {
    let valid = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/mission_message/valid.txt"),
    )
    .unwrap();
    assert!(casebook_sandbox::fuzzing::check_message(&valid));
    assert!(!casebook_sandbox::fuzzing::check_message(&valid[1..]));
    let essay = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/sandbox_request/essay.json"),
    )
    .unwrap();
    assert!(casebook_sandbox::fuzzing::check_request(&essay));
    assert!(!casebook_sandbox::fuzzing::check_request(b"{\"essay\": 1}"));
}

#[test]
fn cite_answers_read_as_they_arrive_give_the_same_document_however_split() {
    use casebook_core::citations::transfer::CiteAnswerDecoder;
    let read = |chunks: &[&[u8]]| {
        let mut d = CiteAnswerDecoder::new(Vec::new(), 1 << 20);
        for c in chunks {
            d.feed(c).unwrap();
        }
        let (out, _, extra) = d.finish().unwrap();
        (out, extra)
    };
    for seed in seeds("cite_answer") {
        // The fuzz target's first 8 bytes choose the split; here every split point.
        let input = &seed[8..];
        let whole = read(&[input]);
        assert!(!whole.0.is_empty());
        for cut in 0..=input.len() {
            let (a, b) = input.split_at(cut);
            assert_eq!(read(&[a, b]), whole, "split at {cut}");
        }
    }
}

/// Found by the `cite_answer` target (`make harden`, 2026-12-07): an answer whose extra
/// field is named like serde_json's private RawValue token is valid JSON, and is read as
/// any other answer: its document decoded, the field kept among the extras. (serde_json's
/// own `Value` will not read it, which the fuzz target's judge now allows for.)
#[test]
fn a_cite_answer_with_a_field_named_like_serde_jsons_private_token_is_read_as_any_other() {
    use casebook_core::citations::transfer::CiteAnswerDecoder;
    let answer = br#" {"$serde_json::private::RawValue": "docx", "documentBase64" : "UEsD\/w==\n", "n": [1 ,{"a": "}"}]}"#;
    for chunk in [answer.len(), 1, 7] {
        let mut d = CiteAnswerDecoder::new(Vec::new(), 1 << 20);
        for piece in answer.chunks(chunk) {
            d.feed(piece).unwrap();
        }
        let (doc, _, extra) = d.finish().unwrap();
        assert_eq!(doc, b"PK\x03\xff", "chunks of {chunk}");
        assert_eq!(extra["$serde_json::private::RawValue"], "docx");
        assert_eq!(extra["n"], serde_json::json!([1, {"a": "}"}]));
    }
}
