//! Text the CLI did not write reaches a person's terminal shown, never obeyed: a
//! terminal's control sequences in a mission's records and messages (`mission start
//! --follow`, `show`, `list`, `export`), in a document's paragraphs (`parse`, a cited
//! essay), in a file name, and in an error body that quotes a part name from the
//! document (`parse`, `cite`: "The service said: …"). The CLI runs on a real
//! pseudo-terminal against the sandbox over loopback HTTP; what the terminal received
//! is checked byte by byte. Off a terminal, `--json` keeps the exact values and a
//! cited essay on a pipe stays byte for byte what the service answered.

mod common;

use casebook_sandbox::{MissionProtocol, Pace, SandboxConfig};
use casebook_testsupport::files::fixture;
use casebook_testsupport::sandbox::Blocking;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Everything a hostile server might send a terminal: a title and a clipboard write
/// (OSC 0, OSC 52), clearing the screen, a device-status request (its answer would be
/// typed into the shell), a disguised link (OSC 8), BEL, backspaces over printed text,
/// a lone CR to overwrite a line, C1 CSI, and a right-to-left override.
const HOSTILE: &str = "Heat \x1b]0;pwned\x07 waves \x1b]52;c;cm0gLXJmIH4=\x07 \
                       \x1b[2J\x1b[6n \x1b]8;;http://evil.invalid\x1b\\link\x1b]8;;\x1b\\ \
                       rm\x08\x08ok done\rfake \u{9b}31m \u{202E}gnp.exe hospital admissions";

/// What each of [`HOSTILE`]'s sequences must look like on the terminal.
const SHOWN: &[&str] = &[
    "^[]0;pwned^G",
    "^[]52;c;cm0gLXJmIH4=^G",
    "^[[2J^[[6n",
    "^[]8;;http://evil.invalid^[\\link^[]8;;^[\\",
    "rm^H^Hok",
    "done^Mfake",
    "\\x9b31m",
    "<U+202E>gnp.exe",
];

fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// What a terminal received, checked: UTF-8, and nothing in it a terminal obeys
/// besides the line ends (the pty's CRLF) and the CLI's own progress-line clearing.
/// Returns it with CRLF as `\n`.
fn assert_inert(what: &str, bytes: &[u8]) -> String {
    let text = String::from_utf8(bytes.to_vec()).unwrap_or_else(|e| {
        panic!(
            "{what}: not UTF-8: {e}: {:?}",
            String::from_utf8_lossy(bytes)
        )
    });
    let text = text.replace("\r\x1b[2K", "\n").replace("\r\n", "\n");
    for (i, c) in text.char_indices() {
        let bad = (c.is_control() && c != '\n' && c != '\t') || is_bidi(c);
        assert!(
            !bad,
            "{what}: {c:?} at {i} reached the terminal raw: {:?}",
            &text[i.saturating_sub(80)..(i + 80).min(text.len())]
        );
    }
    text
}

/// Every string in `v`, however deep.
fn strings(v: &serde_json::Value) -> Vec<&str> {
    match v {
        serde_json::Value::String(s) => vec![s.as_str()],
        serde_json::Value::Array(a) => a.iter().flat_map(strings).collect(),
        serde_json::Value::Object(o) => o.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

fn assert_shown(what: &str, text: &str, shown: &[&str]) {
    for s in shown {
        assert!(text.contains(s), "{what}: {s:?} is not shown in {text:?}");
    }
}

/// `cmd` run with its stdout and stderr on a new pseudo-terminal, and `stdin` (if
/// any) written to its stdin: its exit status and every byte the terminal received.
fn on_terminal(cmd: &mut Command, stdin: Option<&str>) -> (std::process::ExitStatus, Vec<u8>) {
    let (master, slave) = common::pty();
    if stdin.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    // The command keeps its copies of the terminal's end until told otherwise: reads
    // end (EIO) only once the child, holding the last ones, exits.
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let mut file = std::fs::File::from(master);
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = file.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        seen
    });
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(text.as_bytes()).unwrap();
    }
    let status = child.wait().unwrap();
    (status, reader.join().unwrap())
}

/// The sandbox in-process, on a runtime of its own, so the test can block on the CLI.
struct Service {
    service: Blocking,
    data: tempfile::TempDir,
}

impl Service {
    fn start(protocol: MissionProtocol) -> Service {
        Service {
            service: Blocking::start(SandboxConfig {
                pace: Pace::Instant,
                mission_pace_ms: Some(0),
                mission_events: Some(30),
                mission_protocol: protocol,
                ..Default::default()
            }),
            data: tempfile::tempdir().unwrap(),
        }
    }

    /// `casebook --base-url URL ARGS…` with the sandbox's keys and a history of its own.
    fn command(&self, args: &[&str]) -> Command {
        let s = self.service.sandbox();
        let mut cmd = common::against(s.base_url(), args);
        cmd.env("CASEBOOK_CITATIONS_KEY", s.key())
            .env("CASEBOOK_INVESTIGATIONS_KEY", s.key())
            .env("CASEBOOK_DATA_DIR", self.data.path());
        cmd
    }

    fn terminal(&self, args: &[&str]) -> (std::process::ExitStatus, Vec<u8>) {
        on_terminal(&mut self.command(args), None)
    }

    fn piped(&self, args: &[&str], stdin: Option<&str>) -> Output {
        common::fed(&mut self.command(args), stdin)
    }
}

/// The package `bytes` with one part's text edited by `edit`.
fn patch(bytes: &[u8], part: &str, edit: impl Fn(&str) -> String) -> Vec<u8> {
    let mut zin = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut zout = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut edited = false;
    for i in 0..zin.len() {
        let mut f = zin.by_index(i).unwrap();
        let name = f.name().to_owned();
        let mut data = Vec::new();
        f.read_to_end(&mut data).unwrap();
        if name == part {
            data = edit(&String::from_utf8(data).unwrap()).into_bytes();
            edited = true;
        }
        zout.start_file(name, opts).unwrap();
        zout.write_all(&data).unwrap();
    }
    assert!(edited, "no part {part}");
    zout.finish().unwrap().into_inner()
}

/// A real document whose first paragraph starts with [`HOSTILE`], written raw into
/// the XML (a parser that reads a damaged file as best it can takes it as text).
fn hostile_docx(path: &Path) {
    let bytes = patch(
        &std::fs::read(fixture("docx/long-lorem-endnote.docx")).unwrap(),
        "word/document.xml",
        |xml| {
            let open = xml.find("<w:t").unwrap();
            let at = open + xml[open..].find('>').unwrap() + 1;
            format!("{}{HOSTILE} {}", &xml[..at], &xml[at..])
        },
    );
    std::fs::write(path, bytes).unwrap();
}

/// A real deck whose first slide's part name carries the escapes: the service's
/// error names the part it cannot find.
fn hostile_pptx(path: &Path) {
    let deck =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/tests/data/cite/notes-deck.pptx");
    let bytes = patch(
        &std::fs::read(deck).unwrap(),
        "ppt/_rels/presentation.xml.rels",
        |rels| {
            let from = "Target=\"slides/slide1.xml\"";
            assert!(rels.contains(from));
            rels.replacen(
                from,
                "Target=\"slides/\x1b]0;pwned\x07\u{202E}slide\u{9b}6n.xml\"",
                1,
            )
        },
    );
    std::fs::write(path, bytes).unwrap();
}

/// A mission whose objective is [`HOSTILE`], in the seeds' SSE protocol (cards) and in
/// eve's (records, and an agent that quotes the objective back in its plan): following
/// it, showing it, listing and exporting it on a terminal shows every sequence and
/// obeys none. With `--json` on a pipe, each line is JSON whose values are exactly
/// what the service sent, with nothing raw a terminal would obey.
#[test]
fn a_missions_text_is_shown_on_a_terminal_not_obeyed() {
    for protocol in [MissionProtocol::Legacy, MissionProtocol::EveA] {
        let s = Service::start(protocol);
        let what = |cmd: &str| format!("{protocol:?} {cmd}");

        let (status, seen) = s.terminal(&["mission", "start", "--objective", HOSTILE, "--follow"]);
        let shown = assert_inert(&what("start --follow"), &seen);
        assert!(status.success(), "{shown}");
        let sid = shown.lines().next().unwrap().trim().to_owned();
        assert!(sid.starts_with("ses_"), "{shown}");
        // The seeds' cards put the whole objective on one line (a CR is whitespace
        // there); eve's records are JSON, which escapes C0 itself, leaving C1 and the
        // override for the terminal to be shown.
        let followed: &[&str] = match protocol {
            MissionProtocol::Legacy => &[
                "^[]0;pwned^G",
                "^[]52;c;cm0gLXJmIH4=^G",
                "^[[2J^[[6n",
                "^[]8;;http://evil.invalid^[\\link^[]8;;^[\\",
                "rm^H^Hok",
                "\\x9b31m",
                "<U+202E>gnp.exe",
            ],
            _ => &["\\x9b31m", "<U+202E>gnp.exe"],
        };
        assert_shown(&what("start --follow"), &shown, followed);

        let (status, seen) = s.terminal(&["mission", "show", &sid]);
        let shown = assert_inert(&what("show"), &seen);
        assert!(status.success(), "{shown}");
        // The seeds' conversation quotes the objective's first 90 characters in the
        // plan; eve's holds the message as sent, and the agent quotes it back.
        match protocol {
            MissionProtocol::Legacy => assert_shown(
                &what("show"),
                &shown,
                &["Frame the question: Heat ^[]0;pwned^G", "^[[2J^[[6n"],
            ),
            _ => assert_shown(&what("show"), &shown, SHOWN),
        }
        if protocol == MissionProtocol::EveA {
            // The agent's own message, quoting the objective back.
            let plan = shown
                .lines()
                .find(|l| l.starts_with("## Plan for "))
                .unwrap_or_else(|| panic!("no plan in {shown}"));
            assert!(plan.contains("^[]0;pwned^G"), "{plan}");
        }

        let (status, seen) = s.terminal(&["mission", "list"]);
        let shown = assert_inert(&what("list"), &seen);
        assert!(status.success() && shown.contains(&sid), "{shown}");
        assert_shown(
            &what("list"),
            &shown,
            &["^[]0;pwned^G", "\\x9b31m", "<U+202E>"],
        );

        let (status, seen) = s.terminal(&["mission", "export", &sid]);
        let shown = assert_inert(&what("export"), &seen);
        assert!(status.success(), "{shown}");
        assert_shown(
            &what("export"),
            &shown,
            &["^[]0;pwned^G", "<U+202E>gnp.exe"],
        );

        // The JSON transcript on a terminal: the same JSON, escaped where a terminal
        // looks, so it still reads back to the exact text.
        let (status, seen) = s.terminal(&["mission", "export", &sid, "--format", "json"]);
        let shown = assert_inert(&what("export --format json"), &seen);
        assert!(status.success(), "{shown}");
        let transcript: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert!(
            strings(&transcript)
                .iter()
                .any(|t| t.contains("\x1b]0;pwned\x07")),
            "{shown}"
        );

        // Off a terminal: JSON with the exact values, escaped where a terminal looks.
        let run = s.piped(&["mission", "show", &sid, "--json"], None);
        assert!(run.status.success());
        let text = String::from_utf8(run.stdout).unwrap();
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' || is_bidi(c)),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let exact = match protocol {
            MissionProtocol::Legacy => {
                "Heat \x1b]0;pwned\x07 waves \x1b]52;c;cm0gLXJmIH4=\x07 \x1b[2J"
            }
            _ => HOSTILE,
        };
        let said = v["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| i["text"].as_str())
            .chain(
                v["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|m| m["text"].as_str()),
            )
            .any(|t| t.contains(exact));
        assert!(said, "{exact:?}, exactly, in {v}");
        // Following with --json: every line JSON, nothing raw, the objective exact.
        let run = s.piped(&["mission", "watch", &sid, "--json"], None);
        assert!(run.status.success());
        let text = String::from_utf8(run.stdout).unwrap();
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' || is_bidi(c)),
            "{text}"
        );
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(
            lines
                .iter()
                .any(|l| strings(l).iter().any(|t| t.contains(exact))),
            "{exact:?}, exactly, in {text}"
        );
        // The transcript written to a pipe is the service's text as it was.
        let run = s.piped(&["mission", "export", &sid], None);
        assert!(
            String::from_utf8(run.stdout)
                .unwrap()
                .contains("\x1b]0;pwned\x07")
        );
    }
}

/// A document's paragraphs (`parse`), an error body quoting a part name from the
/// document (`parse` and `cite`: "The service said: …"), a file name (the progress
/// line and "Saved …") and a cited essay written to stdout: shown on a terminal,
/// not obeyed. `parse --json` keeps the paragraph's exact text, and the cited essay
/// on a pipe is exactly what the service answered.
#[test]
fn documents_file_names_and_error_bodies_are_shown_not_obeyed() {
    let s = Service::start(MissionProtocol::Legacy);
    let dir = tempfile::tempdir().unwrap();

    let docx = dir.path().join("essay.docx");
    hostile_docx(&docx);
    let (status, seen) = s.terminal(&["parse", docx.to_str().unwrap()]);
    let shown = assert_inert("parse", &seen);
    assert!(status.success(), "{shown}");
    assert_shown("parse", &shown, SHOWN);
    assert!(shown.starts_with("[¶0] Heat ^[]0;pwned^G"), "{shown}");

    let run = s.piped(&["parse", docx.to_str().unwrap(), "--json"], None);
    assert!(run.status.success());
    let text = String::from_utf8(run.stdout).unwrap();
    assert!(
        !text
            .chars()
            .any(|c| (c.is_control() && c != '\n') || is_bidi(c))
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(
        v["paragraphs"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with(HOSTILE),
        "the paragraph's exact text: {v}"
    );

    let pptx = dir.path().join("deck.pptx");
    hostile_pptx(&pptx);
    let said = "The service said: The slide part ppt/slides/^[]0;pwned^G<U+202E>slide\\x9b6n.xml is missing.";
    for args in [
        vec!["parse", pptx.to_str().unwrap()],
        vec!["cite", pptx.to_str().unwrap(), "--json"],
    ] {
        let (status, seen) = s.terminal(&args);
        let shown = assert_inert(args[0], &seen);
        assert_eq!(status.code(), Some(5), "{shown}");
        let line = shown
            .lines()
            .find(|l| l.starts_with("casebook: "))
            .unwrap_or_else(|| panic!("{shown}"));
        assert!(line.contains(said), "{line}");
    }

    // A file name that is itself hostile: the progress line and "Saved …".
    let named = dir.path().join("\x1b]0;pwned\x07\u{202E}x.docx");
    std::fs::copy(&docx, &named).unwrap();
    let (status, seen) = s.terminal(&["cite", named.to_str().unwrap(), "--mode", "every"]);
    let shown = assert_inert("cite a hostile name", &seen);
    assert!(status.success(), "{shown}");
    assert!(
        shown.contains("Citing ") && shown.contains("^[]0;pwned^G<U+202E>x.docx"),
        "{shown}"
    );
    assert!(
        shown.contains("Saved ") && shown.contains("^[]0;pwned^G<U+202E>x.cited.docx"),
        "{shown}"
    );

    // An essay cited to stdout: on a terminal as it is shown, on a pipe as it came.
    let essay = format!(
        "{HOSTILE}.\n\nHospital admissions rise on the hottest days.\n\n\
         References\nSmith, J. (2019). Heat and health. Journal, 4, 1-20.\n"
    );
    let (status, seen) = on_terminal(
        &mut s.command(&["cite", "-", "--mode", "every"]),
        Some(&essay),
    );
    let shown = assert_inert("cite - to a terminal", &seen);
    assert!(status.success(), "{shown}");
    assert_shown("cite - to a terminal", &shown, SHOWN);

    let run = s.piped(&["cite", "-", "--mode", "every"], Some(&essay));
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let cited = String::from_utf8(run.stdout).unwrap();
    assert!(cited.contains(HOSTILE), "exact on a pipe: {cited:?}");
}
