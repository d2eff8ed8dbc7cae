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
    /// A path outside the case's folder that is not a regular file (a device).
    Special(&'static str),
    Fifo,
    Socket,
    /// `a.docx` → `b.docx` → `a.docx`.
    SymlinkLoop,
    /// A real document under a name that is not UTF-8.
    NonUtf8Name,
    /// A real document under a 255-byte name (the usual file-system maximum).
    LongName,
}

/// Where the output goes when the case needs a folder of its own kind.
#[derive(Clone, Copy, PartialEq)]
enum Out {
    Beside,
    /// `{dir}/ro`: a folder nobody may write (a read-only mount when root, who may
    /// write anywhere else).
    ReadOnly,
    /// `{dir}/full`: a 32 KB file system (root only), too small for the result.
    Full,
}

struct Case {
    name: &'static str,
    input: In,
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
    stdin: Option<&'static [u8]>,
    exit: i32,
    /// The error code; empty when the case must succeed.
    code: &'static str,
    out: Out,
    /// The command takes no input path (a mission command).
    no_input: bool,
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
        out: Out::Beside,
        no_input: false,
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn mount_tmpfs(dir: &Path, options: &str) -> bool {
    std::fs::create_dir_all(dir).unwrap();
    Command::new("mount")
        .args(["-t", "tmpfs", "-o", options, "tmpfs"])
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success())
}

fn unmount(dir: &Path) {
    let _ = Command::new("umount").arg(dir).status();
}

/// Every name under `dir`, one level of sub-folders included (the output folders).
fn listing(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().unwrap().is_dir()
            && let Ok(inner) = std::fs::read_dir(e.path())
        {
            for i in inner {
                names.push(format!(
                    "{name}/{}",
                    i.unwrap().file_name().to_string_lossy()
                ));
            }
        }
        names.push(name);
    }
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_inputs_fail_cleanly_and_touch_nothing() {
    // A sandbox in this process for the cases that need a reachable service with
    // particular behaviour; the rest use the CLI's own --sandbox.
    let sandbox = start(SandboxConfig::default()).await.unwrap();
    let stormy = start(SandboxConfig::default()).await.unwrap();
    stormy.knobs().set(|k| {
        k.storm = casebook_sandbox::knobs::Storm {
            count: 1000,
            retry_after: 1,
        }
    });
    let failing = start(SandboxConfig::default()).await.unwrap();
    failing.knobs().set(|k| {
        k.fail = Some(casebook_sandbox::knobs::Fail {
            nth: 1,
            kind: casebook_sandbox::Failure::Status500,
        })
    });
    let history = tempfile::tempdir().unwrap();
    let garbled = start(SandboxConfig::default()).await.unwrap();
    garbled.knobs().set(|k| {
        k.fail = Some(casebook_sandbox::knobs::Fail {
            nth: 1,
            kind: casebook_sandbox::Failure::MalformedJson,
        })
    });
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let big = vec![0u8; casebook_core::citations::documents::MAX_DOCUMENT_BYTES as usize + 1];
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
            stdin: Some(b"   \n"),
            ..case(
                "empty text on stdin",
                In::Missing,
                &["--sandbox", "cite", "-"],
                5,
                "invalid_input",
            )
        },
        Case {
            stdin: Some(b"caf\xe9 au lait\n"),
            ..case(
                "text on stdin that is not UTF-8",
                In::Missing,
                &["--sandbox", "cite", "-"],
                5,
                "invalid_input",
            )
        },
        case(
            "/dev/zero",
            In::Special("/dev/zero"),
            &["--sandbox", "cite"],
            5,
            "not_a_document",
        ),
        case(
            "a FIFO",
            In::Fifo,
            &["--sandbox", "cite"],
            5,
            "not_a_document",
        ),
        case(
            "a socket",
            In::Socket,
            &["--sandbox", "parse"],
            5,
            "not_a_document",
        ),
        case(
            "a symlink loop",
            In::SymlinkLoop,
            &["--sandbox", "cite"],
            1,
            "io",
        ),
        case(
            "a name that is not UTF-8 (cited beside it)",
            In::NonUtf8Name,
            &["--sandbox", "cite", "--mode", "every"],
            0,
            "",
        ),
        case(
            "a 255-byte name (no room for the output's)",
            In::LongName,
            &["--sandbox", "cite"],
            1,
            "io",
        ),
        case(
            "output is a folder",
            In::Fixture("docx/headings-lorem-multirun.docx"),
            &["--sandbox", "cite", "-o", "{dir}"],
            5,
            "invalid_input",
        ),
        Case {
            out: Out::ReadOnly,
            ..case(
                "read-only output folder",
                In::Fixture("docx/headings-lorem-multirun.docx"),
                &["--sandbox", "cite", "-o", "{dir}/ro/out.docx"],
                1,
                "io",
            )
        },
        Case {
            out: Out::Full,
            ..case(
                "output disk fills up",
                In::Fixture("docx/citations-bibliography-toc.docx"),
                &["--sandbox", "cite", "-o", "{dir}/full/out.docx"],
                1,
                "io",
            )
        },
        Case {
            env: vec![("CASEBOOK_CITATIONS_KEY", "not-the-key".into())],
            ..case(
                "wrong key on parse",
                In::Fixture("docx/headings-lorem-multirun.docx"),
                &["--base-url", sandbox.base_url(), "parse"],
                3,
                "unauthorized",
            )
        },
        Case {
            env: vec![("CASEBOOK_CITATIONS_KEY", failing.key().to_owned())],
            ..case(
                "the service fails (500)",
                In::Fixture("docx/headings-lorem-multirun.docx"),
                &["--base-url", failing.base_url(), "cite"],
                1,
                "server",
            )
        },
        Case {
            env: vec![("CASEBOOK_CITATIONS_KEY", garbled.key().to_owned())],
            ..case(
                "the service's answer is not JSON",
                In::Fixture("docx/headings-lorem-multirun.docx"),
                &["--base-url", garbled.base_url(), "cite"],
                1,
                "protocol",
            )
        },
        Case {
            no_input: true,
            // The history lives elsewhere: the case's folder must stay as it was.
            env: vec![("CASEBOOK_DATA_DIR", history.path().display().to_string())],
            ..case(
                "a session id of ..",
                In::Missing,
                &["--sandbox", "mission", "watch", ".."],
                5,
                "invalid_input",
            )
        },
    ];
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let mut skipped = Vec::new();

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
            In::Special(path) => PathBuf::from(path),
            In::Fifo => {
                let p = dir.path().join("pipe.docx");
                assert!(Command::new("mkfifo").arg(&p).status().unwrap().success());
                p
            }
            In::Socket => {
                let p = dir.path().join("socket.docx");
                // Kept open until the case ends, so the socket file stays a socket.
                std::mem::forget(std::os::unix::net::UnixListener::bind(&p).unwrap());
                p
            }
            In::SymlinkLoop => {
                let (a, b) = (dir.path().join("a.docx"), dir.path().join("b.docx"));
                std::os::unix::fs::symlink(&b, &a).unwrap();
                std::os::unix::fs::symlink(&a, &b).unwrap();
                a
            }
            In::NonUtf8Name => {
                use std::os::unix::ffi::OsStrExt;
                let p = dir
                    .path()
                    .join(std::ffi::OsStr::from_bytes(b"r\xe9sum\xe9.docx"));
                std::fs::copy(data("docx/long-lorem-endnote.docx"), &p).unwrap();
                p
            }
            In::LongName => {
                let p = dir.path().join(format!("{}.docx", "n".repeat(250)));
                std::fs::copy(data("docx/headings-lorem-multirun.docx"), &p).unwrap();
                p
            }
        };
        let special = matches!(c.input, In::Special(_) | In::Fifo | In::Socket);
        let sub = match c.out {
            Out::Beside => None,
            Out::ReadOnly => Some(dir.path().join("ro")),
            Out::Full => Some(dir.path().join("full")),
        };
        if let Some(sub) = &sub {
            let mounted = match (c.out, is_root()) {
                (Out::ReadOnly, true) => mount_tmpfs(sub, "ro,size=1m"),
                (Out::ReadOnly, false) => {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::create_dir(sub).unwrap();
                    std::fs::set_permissions(sub, std::fs::Permissions::from_mode(0o555)).unwrap();
                    true
                }
                (_, true) => mount_tmpfs(sub, "size=32k"),
                (_, false) => false,
            };
            if !mounted {
                skipped.push(format!(
                    "{}: needs root to mount a small file system here",
                    c.name
                ));
                continue;
            }
        }
        if c.args.iter().any(|a| a.contains("existing.docx")) {
            std::fs::write(dir.path().join("existing.docx"), b"keep me").unwrap();
        }
        // A device or a pipe is never read here: that is what the case is about.
        let before = if special {
            None
        } else {
            std::fs::read(&input).ok()
        };
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
        if c.stdin.is_none() && !c.no_input {
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
            child.stdin.take().unwrap().write_all(text).unwrap();
        }
        let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
            .await
            .unwrap();
        if let Some(sub) = &sub
            && is_root()
        {
            // Before the listing: what is left in a mount would hide behind the unmount.
            let left: Vec<String> = std::fs::read_dir(sub)
                .map(|d| {
                    d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            assert!(
                left.is_empty(),
                "{}: files were left behind: {left:?}",
                c.name
            );
            unmount(sub);
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(c.exit),
            "{}: exit code; stderr: {stderr}",
            c.name
        );
        if !special {
            assert_eq!(
                std::fs::read(&input).ok(),
                before,
                "{}: the input changed",
                c.name
            );
        }
        let mut listed = listing(dir.path());
        if c.code.is_empty() {
            // Success: exactly one new file, the cited copy beside the input, and a document.
            let out = casebook_core::save::cited_path(&input);
            let name = out.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                listed.contains(&name),
                "{}: no {name} in {listed:?}",
                c.name
            );
            casebook_core::citations::documents::open(&out).unwrap();
            listed.retain(|n| *n != name);
        } else {
            assert!(
                stderr.trim_end().ends_with(&format!("[{}]", c.code)),
                "{}: error code; stderr: {stderr}",
                c.name
            );
        }
        assert_eq!(listed, listed_before, "{}: files were left behind", c.name);
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
    for s in &skipped {
        println!("skipped: {s}");
    }
    // The figure `make harden` reports: the cases that ran and passed, of all of them.
    println!(
        "bad inputs: {}/{}",
        cases.len() - skipped.len(),
        cases.len()
    );
    assert!(
        std::env::var_os("CI").is_none() || skipped.is_empty(),
        "CI runs as root and must run every case: {skipped:?}"
    );
}
