//! `make bench`: `casebook cite` of a 9 MB document against curl posting the same
//! request, prepared beforehand, to the same sandbox. Peak memory is the child's
//! resident high-water mark (`VmHWM`), wall time from spawn to exit; each figure is
//! the median of several runs, taken in turns so both meet the same machine.
//!
//! `CASEBOOK_BENCH_CLI` and `CASEBOOK_BENCH_SANDBOX` name the binaries to measure
//! (make bench: the release builds); by default this test's own debug build and an
//! in-process sandbox.

use base64::Engine as _;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const KEY: &str = "cbx_sandbox_demo_key";
const RUNS: usize = 7;

/// A real .docx just under the largest a 12 MB request carries: forty paragraphs and a
/// stored (incompressible) 8.9 MB picture.
fn nine_mb_docx(path: &Path) -> u64 {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let parts: [(&str, String); 3] = [
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#.into(),
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#.into(),
        ),
        (
            "word/document.xml",
            format!(
                r#"<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{}</w:body></w:document>"#,
                (0..40)
                    .map(|i| format!("<w:p><w:r><w:t>Urban heat paragraph {i} raises hospital admissions among older residents in dense districts.</w:t></w:r></w:p>"))
                    .collect::<String>()
            ),
        ),
    ];
    for (name, body) in parts {
        zip.start_file(name, stored).unwrap();
        zip.write_all(body.as_bytes()).unwrap();
    }
    zip.start_file("word/media/image1.bin", stored).unwrap();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let noise: Vec<u8> = (0..8_950_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    zip.write_all(&noise).unwrap();
    zip.finish().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// Runs `cmd` to its end: wall time and peak resident set in bytes.
///
/// The peak is the child's own `VmHWM`, read every millisecond while it runs: the
/// rusage of a spawned child would also count this test's memory, which the child's
/// address space held until its exec.
fn measured(cmd: &mut Command) -> (Duration, u64) {
    let t0 = Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let hwm = std::fs::read_to_string(&status_path)
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            })
            .unwrap_or(0);
        peak_kb = peak_kb.max(hwm);
        std::thread::sleep(Duration::from_millis(1));
    };
    let wall = t0.elapsed();
    assert!(status.success(), "{cmd:?} failed ({status})");
    (wall, peak_kb * 1024)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// The sandbox to cite against: the named binary, or one in this process.
async fn sandbox() -> (
    String,
    Option<std::process::Child>,
    Option<casebook_sandbox::RunningSandbox>,
) {
    let unlimited = casebook_sandbox::RateLimit {
        per_minute: 0,
        ..Default::default()
    };
    match std::env::var_os("CASEBOOK_BENCH_SANDBOX") {
        Some(bin) => {
            let mut child = Command::new(bin)
                .args(["--port", "0", "--rate-limit", "0"])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("the sandbox binary");
            let mut line = String::new();
            std::io::BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            (line.trim().to_owned(), Some(child), None)
        }
        None => {
            let s = casebook_sandbox::start(casebook_sandbox::SandboxConfig {
                rate_limit: unlimited,
                ..Default::default()
            })
            .await
            .unwrap();
            (s.base_url().to_owned(), None, Some(s))
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a benchmark: make bench"]
async fn bench_cite_of_a_9_mb_document_against_curl() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("Nine megabytes.docx");
    let size = nine_mb_docx(&doc);
    // curl's body prepared beforehand, as the same request Casebook makes.
    let body = dir.path().join("body.json");
    let b64 = base64::engine::general_purpose::STANDARD.encode(std::fs::read(&doc).unwrap());
    std::fs::write(
        &body,
        format!(
            r#"{{"fileBase64":"{b64}","mode":"every_other","minCitations":1,"maxCitations":2}}"#
        ),
    )
    .unwrap();
    drop(b64);
    let (url, mut child, _inside) = sandbox().await;
    let cli: PathBuf = std::env::var_os("CASEBOOK_BENCH_CLI")
        .map(PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_casebook").into());
    let out = dir.path().join("cited.docx");
    let curl_out = dir.path().join("curl.json");
    let data_dir = dir.path().join("data");
    let casebook_of = |doc: &Path| {
        let mut c = Command::new(&cli);
        c.arg("cite")
            .arg(doc)
            .arg("-o")
            .arg(&out)
            .arg("--overwrite")
            .args(["--base-url", &url])
            .env("CASEBOOK_CITATIONS_KEY", KEY)
            .env("CASEBOOK_DATA_DIR", &data_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    };
    let casebook = || casebook_of(&doc);
    let curl = || {
        let mut c = Command::new("curl");
        c.args(["-sS", "--fail", "-o"])
            .arg(&curl_out)
            .args(["-H", &format!("Authorization: Bearer {KEY}")])
            .args(["-H", "Content-Type: application/json"])
            .arg("--data-binary")
            .arg(format!("@{}", body.display()))
            .arg(format!("{url}/citations/v1/cite"));
        c
    };
    // One of each first, so both find the sandbox and the files warm.
    measured(&mut curl());
    measured(&mut casebook());
    let (mut cw, mut cm, mut bw, mut bm) = (vec![], vec![], vec![], vec![]);
    for _ in 0..RUNS {
        let (w, m) = measured(&mut curl());
        cw.push(w.as_secs_f64());
        cm.push(m as f64);
        let (w, m) = measured(&mut casebook());
        bw.push(w.as_secs_f64());
        bm.push(m as f64);
    }
    // What Casebook saved is the document the service wrote.
    let answer: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&curl_out).unwrap()).unwrap();
    let from_curl = base64::engine::general_purpose::STANDARD
        .decode(answer["documentBase64"].as_str().unwrap())
        .unwrap();
    let saved = std::fs::read(&out).unwrap();
    assert_eq!(saved.len(), from_curl.len(), "the same rewritten document");
    assert!(saved.starts_with(b"PK\x03\x04"));

    // The same program citing a small document: what is the program's own, not the document's.
    let small = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/docx/citations-bibliography-toc.docx");
    let small_size = std::fs::metadata(&small).unwrap().len();
    let small_peak = median(
        (0..RUNS)
            .map(|_| measured(&mut casebook_of(&small)).1 as f64)
            .collect(),
    );
    let mb = |b: f64| b / 1_048_576.0;
    let (cw, cm, bw, bm) = (median(cw), median(cm), median(bw), median(bm));
    println!(
        "cite of a {:.2} MB .docx ({RUNS} runs each, medians; {}):",
        mb(size as f64),
        cli.display()
    );
    println!(
        "  curl posting the prepared body: {:.0} ms, peak {:.1} MB",
        cw * 1000.0,
        mb(cm)
    );
    println!(
        "  casebook cite:                  {:.0} ms, peak {:.1} MB",
        bw * 1000.0,
        mb(bm)
    );
    println!(
        "  casebook: wall {:.2}x curl (goal <= 1.15), peak memory {:.2}x the document (goal <= 1.0)",
        bw / cw,
        bm / size as f64
    );
    println!(
        "  casebook cite of a {:.2} MB document: peak {:.1} MB; so the 9 MB document itself adds {:.1} MB",
        mb(small_size as f64),
        mb(small_peak),
        mb(bm - small_peak)
    );
    if let Some(c) = child.as_mut() {
        let _ = c.kill();
        let _ = c.wait();
    }
}
