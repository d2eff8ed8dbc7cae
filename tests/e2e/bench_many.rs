//! Many missions (`make bench`; ignored by `make test`), each figure beside its reference
//! in the same run:
//! - five mission windows each following an eve B stream at 200 records a second, the
//!   reader looking at the last opened: every window's frames against a bare Tauri window
//!   drawing the same deltas, the web processes' CPU together, the memory of the app and
//!   its web processes against one window following alone, and each stream's pace;
//! - a history of 1,000 missions and 5,000,000 records (`bench_history.rs`).

use crate::bench::{
    CPU_SPAN, Service, conversation_floor, cpu_secs, floor_environment, frame_intervals,
    frames_text, growing_chars, percentile, pss_mb, records, remote_app, service_with, status,
};
use crate::missions::start_from_composer;
use casebook_e2e::{App, exclusive, processes};
use std::path::Path;
use std::time::{Duration, Instant};

/// Deltas in each report: at 200 a second, long enough to open five windows and measure.
const DELTAS: u64 = 40_000;

/// What `n` windows following at once measured.
struct Many {
    /// Each window's frame intervals (sorted), the last opened (looked at) last.
    frames: Vec<Vec<f64>>,
    /// All web processes together, in percent of a core; the app's process.
    web_cpu: f64,
    app_cpu: f64,
    /// PSS of the app and every process it started, MB.
    memory: f64,
    /// Records a second each window was told of while measured, and its report's
    /// characters when the measure began.
    rates: Vec<f64>,
    chars: u64,
}

/// The app following `n` missions, each in its window, all on `service`; with
/// `all_looked_at`, each window tells core it is looked at whatever its focus (as every
/// window was treated before windows in the background were sent less).
async fn follow(
    n: usize,
    service: &Service,
    data: &Path,
    env: &[(&str, &str)],
    all_looked_at: bool,
) -> Many {
    let app = App::launch(remote_app(service, data, env)).await;
    let main = app.client.window().await.unwrap();
    app.click("nav-missions").await;
    let mut windows = vec![main.clone()];
    for k in 0..n {
        app.client.switch_to_window(main.clone()).await.unwrap();
        let objective = format!("How does heat affect hospital admissions? (window {k})");
        let w = start_from_composer(&app, &objective, &windows).await;
        windows.push(w);
    }
    let windows = windows.split_off(1);
    if all_looked_at {
        for w in &windows {
            app.client.switch_to_window(w.clone()).await.unwrap();
            let tell = "return window.__TAURI_INTERNALS__.invoke('mission_window_looked_at', { lookedAt: true });";
            app.client.execute(tell, vec![]).await.unwrap();
        }
    }
    let mut chars = 0;
    for w in &windows {
        app.client.switch_to_window(w.clone()).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        while growing_chars(&app).await < 2000 {
            assert!(Instant::now() < deadline, "no report grows in a window");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        chars = chars.max(growing_chars(&app).await);
    }
    let mut frames = Vec::new();
    let mut told = Vec::new();
    for w in &windows {
        app.client.switch_to_window(w.clone()).await.unwrap();
        told.push((records(&app).await, Instant::now()));
        frames.push(frame_intervals(&app, 3000).await);
    }
    let (pid, children) = processes(data, "casebook-app");
    let web: Vec<u32> = (children.iter())
        .filter(|(_, name)| name.starts_with("WebKitWebProces"))
        .map(|(p, _)| *p)
        .collect();
    let web_cpu0: f64 = web.iter().map(|p| cpu_secs(*p)).sum();
    let app_cpu0 = cpu_secs(pid);
    let t0 = Instant::now();
    tokio::time::sleep(CPU_SPAN).await;
    let span = t0.elapsed().as_secs_f64();
    let web_cpu = (web.iter().map(|p| cpu_secs(*p)).sum::<f64>() - web_cpu0) / span * 100.0;
    let app_cpu = (cpu_secs(pid) - app_cpu0) / span * 100.0;
    let memory = pss_mb(pid) + children.iter().map(|(p, _)| pss_mb(*p)).sum::<f64>();
    // Each window's pace over the frames and the CPU reading: what it was told since.
    let mut rates = Vec::new();
    for (w, (before, at)) in windows.iter().zip(&told) {
        app.client.switch_to_window(w.clone()).await.unwrap();
        let now = records(&app).await;
        assert_eq!(
            status(&app).await,
            "running",
            "a report ended before it was measured"
        );
        rates.push((now - before) as f64 / at.elapsed().as_secs_f64());
    }
    app.close().await;
    Many {
        frames,
        web_cpu,
        app_cpu,
        memory,
        rates,
        chars,
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a benchmark: make bench"]
async fn bench_five_windows_each_following_200_records_a_second() {
    let _one = exclusive().await;
    let env = [("CASEBOOK_RENDERER", "auto")];
    // 40 ms between records but deltas, which the sandbox sends 8 times as fast: 200 a second.
    let deltas = DELTAS.to_string();
    let service = service_with("eve-b", 10, 40, &["--mission-reply-deltas", &deltas]);
    let alone = follow(
        1,
        &service,
        tempfile::tempdir().unwrap().path(),
        &env,
        false,
    )
    .await;
    let five = follow(
        5,
        &service,
        tempfile::tempdir().unwrap().path(),
        &env,
        false,
    )
    .await;
    let before = follow(5, &service, tempfile::tempdir().unwrap().path(), &env, true).await;
    let per = 200.0 * 38.0 / 1000.0;
    let floor_env = floor_environment("auto");
    let floor = conversation_floor(floor_env, 38.0, per, five.chars, true).await;
    let p95 = |f: &[f64]| percentile(f, 0.95);
    let floor_p95 = p95(&floor.frames);
    println!(
        "five mission windows, each following an eve B report at 200 records a second (default renderer):"
    );
    for (k, f) in five.frames.iter().enumerate() {
        let looked = if k + 1 == five.frames.len() {
            " (looked at)"
        } else {
            ""
        };
        println!(
            "  window {}{looked}: frames {}; {:.2}x the bare window's p95 (goal <= 1.1); told {:.0} records a second",
            k + 1,
            frames_text(f),
            p95(f) / floor_p95,
            five.rates[k]
        );
    }
    println!(
        "  reference, the same run: a bare Tauri window appending the same deltas: frames {}; one window following alone: frames {}, told {:.0} records a second",
        frames_text(&floor.frames),
        frames_text(&alone.frames[0]),
        alone.rates[0]
    );
    println!(
        "  web processes together: {:.0}% of a core (goal < 60); one window alone: {:.0}%",
        five.web_cpu, alone.web_cpu
    );
    println!(
        "  the app's process, following five streams: {:.0}% of a core; following one: {:.0}%",
        five.app_cpu, alone.app_cpu
    );
    println!(
        "  memory, the app and its web processes (PSS): {:.0} MB; one window following alone {:.0} MB: {:.2}x (goal <= 3)",
        five.memory,
        alone.memory,
        five.memory / alone.memory
    );
    let worst = |m: &Many| {
        (m.frames.iter())
            .map(|f| p95(f) / floor_p95)
            .fold(0.0, f64::max)
    };
    println!(
        "  before (every window sent each batch, as if looked at; the same run): web processes {:.0}% of a core, the app's {:.0}%, memory {:.0} MB, the worst window's p95 {:.2}x the bare window's",
        before.web_cpu,
        before.app_cpu,
        before.memory,
        worst(&before)
    );
    let slowest = five.rates.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "  each stream's pace with five followed: slowest {slowest:.0} records a second, alone {:.0}",
        alone.rates[0]
    );
    drop(service);
}
