//! The local .docx/.pptx paragraph and References reader: any bytes give a document
//! or an error, never a panic, a hang or unbounded memory (the zip budget).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = casebook_core::citations::reader::read(data) {
        for (i, p) in doc.paragraphs.iter().enumerate() {
            assert_eq!(
                p.index as usize, i,
                "paragraph indexes count from 0 without gaps"
            );
        }
    }
});
