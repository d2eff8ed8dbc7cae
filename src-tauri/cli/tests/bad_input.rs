//! The CLI refuses bad input with a clear, specific error: each case asserts the
//! exit code, the error code, that the input is byte-identical afterwards and that
//! no output file was left behind.

use casebook_sandbox::{SandboxConfig, start};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_casebook");

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
}

fn package(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut buf);
    for (name, body) in entries {
        zip.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(body.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
    buf.into_inner()
}

fn office(main_type: &str, main_part: &str) -> Vec<u8> {
    let types = format!(
        r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/{main_part}" ContentType="{main_type}"/></Types>"#
    );
    package(&[("[Content_Types].xml", &types), (main_part, "<x/>")])
}

/// Where the input comes from in one case.
enum In {
    Fixture(&'static str),
    Bytes(&'static str, Vec<u8>),
    Missing,
    Folder,
}

struct Case {
    name: &'static str,
    input: In,
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
    stdin: Option<&'static str>,
    exit: i32,
    code: &'static str,
}

fn case(name: &'static str, input: In, args: &[&str], exit: i32, code: &'static str) -> Case {
    Case {
        name,
        input,
        args: args.iter().map(|s| s.to_string()).collect(),
        env: vec![],
        stdin: None,
        exit,
        code,
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_inputs_fail_cleanly_and_touch_nothing() {
    // A sandbox in this process for the cases that need a reachable service with
    // particular behaviour; the rest use the CLI's own --sandbox.
    let sandbox = start(SandboxConfig::default()).await.unwrap();
    let stormy = start(SandboxConfig::default()).await.unwrap();
    stormy.faults().set_429_storm(1000, 1);
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let big = vec![0u8; casebook_core::documents::MAX_DOCUMENT_BYTES as usize + 1];
    const W: &str =
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml";

    let mut cases = vec![
        case(
            "legacy .doc",
            In::Fixture("bad/legacy-word97-hyperlink.doc"),
            &["--sandbox", "cite"],
            5,
            "legacy_format",
        ),
        case(
            "legacy .ppt",
            In::Fixture("bad/legacy-ppt97-basic.ppt"),
            &["--sandbox", "cite"],
            5,
            "legacy_format",
        ),
        case(
            "encrypted .docx",
            In::Fixture("bad/encrypted-password-is-pass.docx"),
            &["--sandbox", "cite"],
            5,
            "encrypted_document",
        ),
        case(
            "encrypted .pptx",
            In::Fixture("bad/encrypted-password-is-tika.pptx"),
            &["--sandbox", "parse"],
            5,
            "encrypted_document",
        ),
        case(
            "corrupt zip",
            In::Fixture("bad/clusterfuzz-corrupt-zip.docx"),
            &["--sandbox", "cite"],
            5,
            "corrupt_document",
        ),
        case(
            "truncated zip",
            In::Fixture("bad/truncated-zip.docx"),
            &["--sandbox", "parse"],
            5,
            "corrupt_document",
        ),
        case(
            "external XML entity",
            In::Fixture("bad/xxe-external-entity.docx"),
            &["--sandbox", "cite"],
            5,
            "unsafe_document",
        ),
        case(
            "empty file",
            In::Bytes("empty.docx", vec![]),
            &["--sandbox", "cite"],
            5,
            "empty_file",
        ),
        case(
            "text named .docx",
            In::Bytes("notes.docx", b"just words".to_vec()),
            &["--sandbox", "cite"],
            5,
            "not_a_document",
        ),
        case(
            "plain zip",
            In::Bytes("archive.docx", package(&[("a.txt", "a")])),
            &["--sandbox", "cite"],
            5,
            "not_a_document",
        ),
        case(
            "spreadsheet",
            In::Bytes(
                "sheet.xlsx",
                office(
                    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
                    "xl/workbook.xml",
                ),
            ),
            &["--sandbox", "cite"],
            5,
            "unsupported_document",
        ),
        case(
            "macro-enabled",
            In::Bytes(
                "macro.docm",
                office(
                    "application/vnd.ms-word.document.macroEnabled.main+xml",
                    "word/document.xml",
                ),
            ),
            &["--sandbox", "cite"],
            5,
            "macro_enabled",
        ),
        case(
            "template",
            In::Bytes(
                "t.dotx",
                office(
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
                    "word/document.xml",
                ),
            ),
            &["--sandbox", "cite"],
            5,
            "template_or_show",
        ),
        case(
            "main part missing",
            In::Bytes(
                "hollow.docx",
                package(&[(
                    "[Content_Types].xml",
                    &format!(
                        r#"<Types><Override PartName="/word/document.xml" ContentType="{W}"/></Types>"#
                    ),
                )]),
            ),
            &["--sandbox", "cite"],
            5,
            "corrupt_document",
        ),
        case(
            "too large",
            In::Bytes("huge.docx", big),
            &["--sandbox", "cite"],
            5,
            "too_large",
        ),
        case("missing file", In::Missing, &["--sandbox", "cite"], 1, "io"),
        case(
            "a folder",
            In::Folder,
            &["--sandbox", "cite"],
            5,
            "not_a_document",
        ),
        case(
            "min above max",
            In::Fixture("docx/headings-lorem-multirun.docx"),
            &["--sandbox", "cite", "--min", "3", "--max", "1"],
            5,
            "invalid_input",
        ),
        case(
            "no service chosen",
            In::Fixture("docx/headings-lorem-multirun.docx"),
            &["cite"],
            5,
            "invalid_input",
        ),
        case(
            "plain http off loopback",
            In::Fixture("docx/headings-lorem-multirun.docx"),
            &["--base-url", "http://example.org", "cite"],
            5,
            "invalid_input",
        ),
        case(
            "output into a missing folder",
            In::Fixture("docx/headings-lorem-multirun.docx"),
            &["--sandbox", "cite", "-o", "{dir}/nowhere/out.docx"],
            1,
            "io",
        ),
        case(
            "output is the input",
            In::Fixture("docx/headings-lorem-multirun.docx"),
            &["--sandbox", "cite", "-o", "{input}"],
            5,
            "invalid_input",
        ),
        case(
            "output exists",
            In::Fixture("docx/headings-lorem-multirun.docx"),
            &["--sandbox", "cite", "-o", "{dir}/existing.docx"],
            5,
            "invalid_input",
        ),
        Case {
            env: vec![("CASEBOOK_CITATIONS_KEY", "not-the-key".into())],
            ..case(
                "wrong key",
                In::Fixture("docx/headings-lorem-multirun.docx"),
                &["--base-url", sandbox.base_url(), "cite"],
                3,
                "unauthorized",
            )
        },
        Case {
            env: vec![("CASEBOOK_CITATIONS_KEY", stormy.key().to_owned())],
            ..case(
                "429 after every retry",
                In::Fixture("docx/headings-lorem-multirun.docx"),
                &["--base-url", stormy.base_url(), "cite"],
                4,
                "rate_limited",
            )
        },
        Case {
            env: vec![("CASEBOOK_CITATIONS_KEY", "k".into())],
            ..case(
                "service unreachable",
                In::Fixture("docx/headings-lorem-multirun.docx"),
                &[
                    "--base-url",
                    &format!("http://127.0.0.1:{closed_port}"),
                    "cite",
                ],
                6,
                "network",
            )
        },
        Case {
            stdin: Some("   \n"),
            ..case(
                "empty text on stdin",
                In::Missing,
                &["--sandbox", "cite", "-"],
                5,
                "invalid_input",
            )
        },
    ];
    assert!(cases.len() >= 20);

    for c in cases.iter_mut() {
        let dir = tempfile::tempdir().unwrap();
        let input: PathBuf = match &c.input {
            In::Fixture(rel) => {
                let p = dir.path().join(Path::new(rel).file_name().unwrap());
                std::fs::copy(data(rel), &p).unwrap();
                p
            }
            In::Bytes(name, bytes) => {
                let p = dir.path().join(name);
                std::fs::write(&p, bytes).unwrap();
                p
            }
            In::Missing => dir.path().join("missing.docx"),
            In::Folder => {
                let p = dir.path().join("folder.docx");
                std::fs::create_dir(&p).unwrap();
                p
            }
        };
        if c.args.iter().any(|a| a.contains("existing.docx")) {
            std::fs::write(dir.path().join("existing.docx"), b"keep me").unwrap();
        }
        let before = std::fs::read(&input).ok();
        let listed_before = listing(dir.path());
        let args: Vec<String> = c
            .args
            .iter()
            .map(|a| {
                a.replace("{dir}", &dir.path().display().to_string())
                    .replace("{input}", &input.display().to_string())
            })
            .collect();
        let mut cmd = Command::new(BIN);
        cmd.args(&args);
        // Text on stdin is read through "-", already among the args.
        if c.stdin.is_none() {
            cmd.arg(&input);
        }
        cmd.env_remove("CASEBOOK_BASE_URL")
            .env_remove("CASEBOOK_CITATIONS_KEY")
            .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent")
            .stdin(if c.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in &c.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        if let Some(text) = c.stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(c.exit),
            "{}: exit code; stderr: {stderr}",
            c.name
        );
        assert!(
            stderr.trim_end().ends_with(&format!("[{}]", c.code)),
            "{}: error code; stderr: {stderr}",
            c.name
        );
        assert_eq!(
            std::fs::read(&input).ok(),
            before,
            "{}: the input changed",
            c.name
        );
        assert_eq!(
            listing(dir.path()),
            listed_before,
            "{}: files were left behind",
            c.name
        );
        if dir.path().join("existing.docx").exists() {
            assert_eq!(
                std::fs::read(dir.path().join("existing.docx")).unwrap(),
                b"keep me",
                "{}",
                c.name
            );
        }
        assert!(
            !stderr.contains(sandbox.key()),
            "{}: the key leaked into stderr",
            c.name
        );
    }
}
