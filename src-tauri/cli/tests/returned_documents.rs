//! `casebook cite` against a service whose answer is a package no dropped document
//! could be: a zip bomb, entries named out of the package (`../`, `/`, `C:\`), a
//! symbolic link. Each is refused as bad input (exit 5) in plain words, and nothing is
//! written: no output file, no temporary left beside it.

mod common;

use casebook_sandbox::cite_variants::HostileDocument;
use casebook_sandbox::{CiteVariants, SandboxConfig};
use casebook_testsupport::files::fixture;
use casebook_testsupport::sandbox::Blocking;
use std::path::Path;
use std::process::Output;

struct Service(Blocking);

impl Service {
    fn start(hostile: HostileDocument) -> Service {
        Service(Blocking::start(SandboxConfig {
            citations: CiteVariants {
                hostile_document: Some(hostile),
                ..Default::default()
            },
            ..Default::default()
        }))
    }

    fn run(&self, args: &[&str]) -> Output {
        let s = self.0.sandbox();
        common::against(s.base_url(), args)
            .env("CASEBOOK_CITATIONS_KEY", s.key())
            .output()
            .unwrap()
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

#[test]
fn each_hostile_answer_exits_5_says_why_and_writes_nothing() {
    let cases = [
        (HostileDocument::Bomb, "(it is what a zip bomb looks like)"),
        (
            HostileDocument::LyingBomb,
            "unpacks to more than 512 MB (its parts say they are smaller than they are)",
        ),
        (
            HostileDocument::ParentPath,
            "a file named \"../casebook-escape.txt\", a path leading out of its folder",
        ),
        (
            HostileDocument::AbsolutePath,
            "a file named \"/tmp/casebook-escape.txt\", an absolute path",
        ),
        (
            HostileDocument::DrivePath,
            "a file named \"C:\\casebook-escape.txt\", with a backslash in its path",
        ),
        (
            HostileDocument::Symlink,
            "holds \"word/media/link\" as a symbolic link",
        ),
    ];
    for (what, words) in cases {
        let s = Service::start(what);
        for (doc, explicit) in [
            ("docx/headings-lorem-multirun.docx", true),
            ("pptx/title-bullets-notes.pptx", false),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let name = Path::new(doc).file_name().unwrap();
            let input = dir.path().join(name);
            std::fs::copy(fixture(doc), &input).unwrap();
            let out = dir.path().join("cited.out");
            let mut args = vec!["cite", input.to_str().unwrap(), "--mode", "every"];
            if explicit {
                args.extend(["-o", out.to_str().unwrap()]);
            }
            let run = s.run(&args);
            let err = String::from_utf8_lossy(&run.stderr);
            assert_eq!(run.status.code(), Some(5), "{what:?} {doc}: {err}");
            assert!(
                err.contains(
                    "The citation service returned a document Casebook refuses, so nothing was saved."
                ),
                "{what:?} {doc}: {err}"
            );
            assert!(err.contains(words), "{what:?} {doc}: {err}");
            assert_eq!(
                listing(dir.path()),
                vec![name.to_string_lossy().into_owned()],
                "{what:?} {doc}: only the original is in its folder"
            );
            assert!(run.stdout.is_empty(), "{what:?} {doc}: nothing printed");
        }
        // Nothing escaped to where the hostile names point, either.
        assert!(!Path::new("/tmp/casebook-escape.txt").exists());
    }
}
