//! Mission timeline figures, in the real window (`make bench`; ignored by `make test`):
//! event-to-screen latency at 200 events a second, and memory after 50 000 events.
//!
//! Latency: the sandbox stamps `sentAt` (Unix ms) in each event as it writes it to the
//! stream; the mission window records `Date.now() - sentAt` when the event's card is
//! put in the DOM (`window.__casebookLatency`). Memory: resident set sizes from /proc.

use casebook_e2e::{App, AppOptions, exclusive};
use fantoccini::Locator;
use std::path::Path;
use std::time::{Duration, Instant};

const OBJECTIVE: &str = "How does urban heat exposure affect hospital admissions?";

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

/// Resident set size of a process, in MB.
fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The casebook-app process using `data_dir`, and its child processes (WebKit's web
/// and network processes) with their names.
fn app_processes(data_dir: &Path) -> (u32, Vec<(u32, String)>) {
    let want = format!("CASEBOOK_DATA_DIR={}", data_dir.display());
    let mut app = None;
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // "pid (comm) state ppid …": comm may hold spaces, so split after the last ')'.
        let Some((head, tail)) = stat.rsplit_once(')') else {
            continue;
        };
        let comm = head.split_once('(').map(|x| x.1).unwrap_or("").to_owned();
        let ppid: u32 = tail
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        parents.push((pid, ppid, comm.clone()));
        if comm.starts_with("casebook-app") {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            if env.split(|&b| b == 0).any(|kv| kv == want.as_bytes()) {
                app = Some(pid);
            }
        }
    }
    let app = app.expect("the casebook-app process for this data dir");
    let children = parents
        .into_iter()
        .filter(|(_, ppid, _)| *ppid == app)
        .map(|(pid, _, comm)| (pid, comm))
        .collect();
    (app, children)
}

/// CPU time (user + system) a process has used, in seconds.
fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let Some((_, tail)) = stat.rsplit_once(')') else {
        return 0.0;
    };
    let f: Vec<&str> = tail.split_whitespace().collect();
    // After the command: state, ppid, … utime is field 14 and stime 15 of the whole line.
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Intervals between animation frames when only a word changes each frame: what a
/// frame costs on this machine, to compare the timeline's frames with.
async fn baseline_frames(app: &App, ms: u64) -> Vec<f64> {
    let v = app
        .client
        .execute_async(
            "const [ms, done] = [arguments[0], arguments[arguments.length - 1]];
             const el = document.querySelector('[data-testid=mission-elapsed]');
             const out = []; let last = performance.now(); const end = last + ms; let i = 0;
             function f(t) { out.push(t - last); last = t; el.textContent = String(i++);
               if (t < end) requestAnimationFrame(f); else done(out); }
             requestAnimationFrame(f);",
            vec![ms.into()],
        )
        .await
        .unwrap();
    let mut xs: Vec<f64> = serde_json::from_value(v).unwrap_or_default();
    xs.sort_by(f64::total_cmp);
    xs
}

/// The numbers the mission window keeps in `window[name]` for benchmarks, sorted.
async fn window_numbers(app: &App, name: &str) -> Vec<f64> {
    let v = app
        .client
        .execute(&format!("return window.{name};"), vec![])
        .await
        .unwrap();
    let mut xs: Vec<f64> = serde_json::from_value(v)
        .unwrap_or_else(|e| panic!("window.{name} is not a list of numbers: {e}"));
    xs.sort_by(f64::total_cmp);
    xs
}

async fn status(app: &App) -> String {
    match app
        .client
        .find(Locator::Css("[data-testid=mission-status]"))
        .await
    {
        Ok(el) => el
            .attr("data-status")
            .await
            .ok()
            .flatten()
            .unwrap_or_default(),
        Err(_) => String::new(),
    }
}

async fn count(app: &App) -> u64 {
    app.client
        .execute(
            "return window.__casebookMission ? window.__casebookMission.count() : 0;",
            vec![],
        )
        .await
        .ok()
        .and_then(|v| v.as_u64())
        .unwrap_or(0)
}

/// Starts a mission from the composer and switches WebDriver to its window.
async fn start(app: &App) {
    app.click("nav-missions").await;
    app.testid("mission-objective")
        .await
        .send_keys(OBJECTIVE)
        .await
        .unwrap();
    let main = app.client.window().await.unwrap();
    app.until("a preview", || async {
        !app.testid("mission-preview")
            .await
            .text()
            .await
            .unwrap_or_default()
            .is_empty()
    })
    .await;
    app.click("mission-start").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let window = loop {
        let handles = app.client.windows().await.unwrap_or_default();
        if let Some(h) = handles.into_iter().find(|h| *h != main) {
            break h;
        }
        assert!(Instant::now() < deadline, "no mission window");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    app.client.switch_to_window(window).await.unwrap();
    app.testid("mission-status").await;
}

async fn wait_complete(app: &App, minutes: u64) {
    let deadline = Instant::now() + Duration::from_secs(minutes * 60);
    while status(app).await != "complete" {
        assert!(
            Instant::now() < deadline,
            "the mission did not complete ({} events so far)",
            count(app).await
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Intervals between animation frames over `ms`, sorted (how smooth the window is).
async fn frame_intervals(app: &App, ms: u64) -> Vec<f64> {
    let v = app
        .client
        .execute_async(
            "const [ms, done] = [arguments[0], arguments[arguments.length - 1]];
             const out = []; let last = performance.now(); const end = last + ms;
             function f(t) { out.push(t - last); last = t; if (t < end) requestAnimationFrame(f); else done(out); }
             requestAnimationFrame(f);",
            vec![ms.into()],
        )
        .await
        .unwrap();
    let mut xs: Vec<f64> = serde_json::from_value(v).unwrap_or_default();
    xs.sort_by(f64::total_cmp);
    xs
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a benchmark: make bench"]
async fn bench_latency_at_200_events_a_second() {
    let _one = exclusive().await;
    // Under Xvfb there is no GPU: WebKit's compositing runs on software GL, which is
    // most of a frame's cost. The second run shows the same app without it.
    latency_run("WebKit defaults", &[]).await;
    latency_run(
        "WEBKIT_DISABLE_COMPOSITING_MODE=1",
        &[("WEBKIT_DISABLE_COMPOSITING_MODE", "1")],
    )
    .await;
}

async fn latency_run(label: &str, extra_env: &[(&str, &str)]) {
    println!("mission latency, {label}:");
    let data = tempfile::tempdir().unwrap();
    let events = std::env::var("CASEBOOK_BENCH_EVENTS").unwrap_or_else(|_| "3000".into());
    let mut env: Vec<(String, String)> = vec![
        ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "5".into()),
        ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), events),
    ];
    env.extend(
        extra_env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let app = App::launch(AppOptions {
        data_dir: Some(data.path().to_path_buf()),
        env,
        ..Default::default()
    })
    .await;
    start(&app).await;
    let started = Instant::now();
    while count(&app).await < 50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (pid, children) = app_processes(data.path());
    let cpu_before: Vec<f64> = std::iter::once(pid)
        .chain(children.iter().map(|c| c.0))
        .map(cpu_secs)
        .collect();
    let t0 = Instant::now();
    let frames = frame_intervals(&app, 3000).await;
    let wall = t0.elapsed().as_secs_f64();
    let cpu: Vec<(String, f64)> = std::iter::once((pid, "casebook-app".to_owned()))
        .chain(children.iter().cloned())
        .zip(cpu_before)
        .map(|((p, name), before)| (name, (cpu_secs(p) - before) / wall * 100.0))
        .collect();
    wait_complete(&app, 3).await;
    let took = started.elapsed().as_secs_f64();
    let baseline = baseline_frames(&app, 2000).await;
    let n = count(&app).await;
    let lat = window_numbers(&app, "__casebookLatency").await;
    let arrival = window_numbers(&app, "__casebookArrival").await;
    let span = window_numbers(&app, "__casebookSentSpan").await;
    let sent_rate = (arrival.len() as f64 - 1.0) / ((span[1] - span[0]) / 1000.0);
    println!(
        "  the sandbox sent {} live events at {sent_rate:.0} events/s (from their sentAt stamps)",
        arrival.len()
    );
    println!(
        "  sandbox to window (IPC channel) over {} events: p50 {:.0} ms, p95 {:.0} ms",
        arrival.len(),
        percentile(&arrival, 0.5),
        percentile(&arrival, 0.95)
    );
    println!(
        "  {n} events in {took:.1} s ({:.0} events/s); event-to-screen over {} cards: p50 {:.0} ms, p95 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        n as f64 / took,
        lat.len(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.95),
        percentile(&lat, 0.99),
        lat.last().copied().unwrap_or(f64::NAN)
    );
    println!(
        "  frame interval while streaming: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        percentile(&frames, 0.5),
        percentile(&frames, 0.95),
        frames.last().copied().unwrap_or(f64::NAN)
    );
    println!(
        "  for comparison, a one-word repaint each frame when idle: p50 {:.1} ms, p95 {:.1} ms",
        percentile(&baseline, 0.5),
        percentile(&baseline, 0.95)
    );
    for (name, pct) in &cpu {
        println!("  CPU while streaming, {name}: {pct:.0}% of a core");
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "  machine: {} cores, load average {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let (_, children) = app_processes(data.path());
    println!("  RSS at {n} events: casebook-app {:.0} MB", rss_mb(pid));
    for (p, name) in &children {
        println!("  RSS at {n} events: {name} {:.0} MB", rss_mb(*p));
    }
    // Cards that scroll past between two frames are never on screen, so not timed.
    assert!(!lat.is_empty(), "no card was timed");
    app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a benchmark: make bench"]
async fn bench_memory_after_50k_events() {
    let _one = exclusive().await;
    let data = tempfile::tempdir().unwrap();
    let app = App::launch(AppOptions {
        data_dir: Some(data.path().to_path_buf()),
        env: vec![
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "1".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), "50000".into()),
        ],
        ..Default::default()
    })
    .await;
    let (pid, _) = app_processes(data.path());
    let rss_start = rss_mb(pid);
    start(&app).await;
    let started = Instant::now();
    // Frame pacing while the stream pours in: early, and once the timeline is long.
    while count(&app).await < 1_000 {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let frames_early = frame_intervals(&app, 3000).await;
    while count(&app).await < 20_000 {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let frames_live = frame_intervals(&app, 3000).await;
    wait_complete(&app, 10).await;
    let frames_idle = frame_intervals(&app, 2000).await;
    let took = started.elapsed().as_secs_f64();
    let n = count(&app).await;
    // Let the stores settle, then read the resident sizes.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (_, children) = app_processes(data.path());
    let rss_app = rss_mb(pid);
    let children: Vec<(String, f64)> = children
        .iter()
        .map(|(p, name)| (name.clone(), rss_mb(*p)))
        .collect();

    // How the full timeline responds: a filter over every event, and a jump to the top.
    let filter_script = format!(
        "const done = arguments[arguments.length - 1];
         const input = document.querySelector('[data-testid=timeline-search]');
         const shown = () => document.querySelector('[data-testid=timeline-shown]').textContent;
         const t0 = performance.now();
         input.value = 'meta-analysis'; input.dispatchEvent(new Event('input', {{ bubbles: true }}));
         const wait = () => shown() !== '{n} shown'
           ? requestAnimationFrame(() => done(performance.now() - t0 - 150))
           : requestAnimationFrame(wait);
         requestAnimationFrame(wait);"
    );
    let filter_ms = app
        .client
        .execute_async(&filter_script, vec![])
        .await
        .unwrap()
        .as_f64()
        .unwrap_or(f64::NAN);
    let top_ms = app
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             const input = document.querySelector('[data-testid=timeline-search]');
             input.value = ''; input.dispatchEvent(new Event('input', { bubbles: true }));
             setTimeout(() => { const t = document.querySelector('[data-testid=timeline]');
               const t0 = performance.now(); t.scrollTop = 0;
               requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - t0))); }, 400);",
            vec![],
        )
        .await
        .unwrap()
        .as_f64()
        .unwrap_or(f64::NAN);
    let cards = app.all_css("[data-testid=event-card]").await.len();

    println!(
        "mission memory: {n} events in {took:.1} s; casebook-app RSS {rss_start:.0} MB at start, {rss_app:.0} MB after"
    );
    for (name, mb) in &children {
        println!("  child process {name}: RSS {mb:.0} MB");
    }
    println!(
        "mission timeline at {n} events: {cards} cards in the DOM; search over all events {filter_ms:.0} ms (after the 150 ms typing pause); jump to the top {top_ms:.0} ms"
    );
    for (when, frames) in [
        ("streaming, after 1 000 events", &frames_early),
        ("streaming, after 20 000 events", &frames_live),
        ("idle at the end", &frames_idle),
    ] {
        println!(
            "  frame interval {when}: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
            percentile(frames, 0.5),
            percentile(frames, 0.95),
            frames.last().copied().unwrap_or(f64::NAN)
        );
    }
    assert!(n >= 49_000, "{n} events");
    assert!(cards < 100, "the timeline is virtualized ({cards} cards)");
    app.close().await;
}

/// Soak (`make harden`): 10,000 events at full speed (no pause between them) into the
/// real window, which then holds every id once, in the service's order.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "soak: make harden"]
async fn soak_window_10000_events_at_full_speed() {
    const EVENTS: u64 = 10_000;
    let _one = exclusive().await;
    let data = tempfile::tempdir().unwrap();
    let app = App::launch(AppOptions {
        data_dir: Some(data.path().to_path_buf()),
        env: vec![
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "0".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), EVENTS.to_string()),
        ],
        ..Default::default()
    })
    .await;
    start(&app).await;
    wait_complete(&app, 10).await;
    let ids = app
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             window.__casebookMission.ids().then(done, (e) => done(String(e)));",
            vec![],
        )
        .await
        .unwrap();
    let ids: Vec<String> =
        serde_json::from_value(ids.clone()).unwrap_or_else(|e| panic!("ids() gave {ids}: {e}"));
    let n = count(&app).await;
    // The sandbox's ids are the sequence numbers: in order, once each, from 1.
    let want: Vec<String> = (1..=ids.len() as u64).map(|i| i.to_string()).collect();
    assert!(ids.len() as u64 >= EVENTS - 10, "{} events", ids.len());
    assert_eq!(ids, want, "every id once, in order");
    assert_eq!(n, ids.len() as u64, "the window counted every event once");
    println!(
        "soak window: {EVENTS} events asked at full speed, {} held, 0 lost, 0 repeated",
        ids.len()
    );
    app.close().await;
}
