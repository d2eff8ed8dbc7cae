//! SSE decoding throughput: Casebook's decoder side by side with the
//! eventsource-stream crate, on the same mission-like stream in TCP-sized chunks.

use casebook_core::missions::protocol::sse::SseDecoder;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use std::hint::black_box;

/// 20,000 events shaped like the sandbox's (id, event, one JSON data line),
/// with a keep-alive comment every 100 events.
fn stream() -> Vec<u8> {
    let mut s = String::from("retry: 1000\n\n");
    for i in 1..=20_000u32 {
        if i % 100 == 0 {
            s.push_str(": keep-alive\n\n");
        }
        s.push_str(&format!(
            "id: {i}\nevent: source.found\ndata: {{\"sessionId\":\"ses_4f2a9c\",\"seq\":{i},\"sentAt\":1763700000000,\"title\":\"Global burden of disease study {i}\",\"url\":\"https://doi.org/10.1016/S0140-6736({i})\",\"publisher\":\"The Lancet\",\"year\":2020}}\n\n"
        ));
    }
    s.into_bytes()
}

fn bench(c: &mut Criterion) {
    let input = stream();
    let chunks: Vec<bytes::Bytes> = input
        .chunks(1400)
        .map(bytes::Bytes::copy_from_slice)
        .collect();
    let mut group = c.benchmark_group("sse_decode");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.bench_function("casebook", |b| {
        b.iter(|| {
            let mut d = SseDecoder::new();
            let mut n = 0usize;
            for chunk in &chunks {
                d.feed_with(chunk, |e| {
                    n += e.data.len();
                });
            }
            black_box(n)
        })
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    group.bench_function("eventsource-stream", |b| {
        b.iter(|| {
            rt.block_on(async {
                use eventsource_stream::Eventsource;
                let s = futures_util::stream::iter(
                    chunks
                        .iter()
                        .cloned()
                        .map(Ok::<_, std::convert::Infallible>),
                );
                let mut events = s.eventsource();
                let mut n = 0usize;
                while let Some(e) = events.next().await {
                    n += e.unwrap().data.len();
                }
                black_box(n)
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
