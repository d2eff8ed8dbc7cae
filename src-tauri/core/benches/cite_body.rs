//! Building a cite request and decoding its answer for a 9 MB document: time, and
//! peak heap (a counting allocator) above what was live before each step.

use base64::Engine as _;
use casebook_core::citations::client::{Input, ValidOptions, decode_cite_answer, request_body};
use casebook_core::citations::transfer::CiteAnswerDecoder;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A real .docx of about 9 MB: a small document plus a 9 MB stored (incompressible) image.
fn nine_mb_docx() -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut buf);
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("[Content_Types].xml", stored).unwrap();
    zip.write_all(br#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#).unwrap();
    zip.start_file("word/document.xml", stored).unwrap();
    zip.write_all(b"<?xml version=\"1.0\"?><w:document><w:body><w:p><w:r><w:t>Hello</w:t></w:r></w:p></w:body></w:document>").unwrap();
    zip.start_file("word/media/image1.bin", stored).unwrap();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    // Just under the largest document a 12,000,000-byte request can carry.
    let noise: Vec<u8> = (0..8_990_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    zip.write_all(&noise).unwrap();
    zip.finish().unwrap();
    buf.into_inner()
}

/// Peak heap above the live heap at the start, while `f` runs.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - base)
}

fn bench(c: &mut Criterion) {
    let doc = nine_mb_docx();
    let input = Input::document(&doc).unwrap();
    let opts = ValidOptions::default();
    let body = request_body(&input, Some(&opts)).unwrap();
    let answer = format!(
        "{{\"documentBase64\":\"{}\",\"kind\":\"docx\"}}",
        base64::engine::general_purpose::STANDARD.encode(&doc)
    )
    .into_bytes();

    let (_, build_peak) = peak_of(|| black_box(request_body(&input, Some(&opts)).unwrap()));
    let (_, decode_peak) = peak_of(|| black_box(decode_cite_answer(&answer, &input).unwrap()));
    // What a cite does: the answer as it arrives, decoded into a file (here, a sink).
    let streamed = || {
        let mut d = CiteAnswerDecoder::new(std::io::sink(), u64::MAX);
        for chunk in answer.chunks(16 * 1024) {
            d.feed(chunk).unwrap();
        }
        d.finish().unwrap().1
    };
    let (_, stream_peak) = peak_of(|| black_box(streamed()));
    let mb = |n: usize| n as f64 / 1_048_576.0;
    eprintln!(
        "cite_body: document {:.1} MB, request body {:.1} MB; peak heap: build in memory {:.1} MB, decode in memory {:.1} MB, decode as it arrives {:.2} MB",
        mb(doc.len()),
        mb(body.len()),
        mb(build_peak),
        mb(decode_peak),
        mb(stream_peak)
    );

    let mut group = c.benchmark_group("cite_9mb");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(doc.len() as u64));
    group.bench_function("build_request_body", |b| {
        b.iter(|| black_box(request_body(&input, Some(&opts)).unwrap()))
    });
    group.bench_function("decode_answer", |b| {
        b.iter(|| black_box(decode_cite_answer(&answer, &input).unwrap()))
    });
    group.bench_function("decode_answer_as_it_arrives", |b| {
        b.iter(|| black_box(streamed()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
