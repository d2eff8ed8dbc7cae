//! The package's configuration, checked without building it (`make package` takes
//! minutes): what the .deb installs, and the desktop entry that makes "Open with
//! Casebook" work for Word and PowerPoint files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const DOCX: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
const PPTX: &str = "application/vnd.openxmlformats-officedocument.presentationml.presentation";

fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn config() -> serde_json::Value {
    let text = std::fs::read_to_string(here().join("tauri.conf.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Width and height from a PNG's header.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is a PNG",
        path.display()
    );
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn the_bundle_is_a_deb_with_the_app_the_cli_and_icons_at_every_size() {
    let c = config();
    let bundle = &c["bundle"];
    assert_eq!(bundle["active"], true);
    assert_eq!(bundle["targets"], serde_json::json!(["deb"]));
    assert!(
        c.get("version").is_none(),
        "the version is the workspace's (Cargo.toml), not a second copy"
    );
    assert_eq!(c["mainBinaryName"], "casebook-app", "/usr/bin/casebook-app");
    assert_eq!(c["productName"], "Casebook", "Casebook.desktop");

    let deb = &bundle["linux"]["deb"];
    let depends: Vec<&str> = deb["depends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    // The bundler adds libwebkit2gtk-4.1-0 and libgtk-3-0 itself (twice if named
    // here); these are the other libraries the app links directly (readelf NEEDED).
    for lib in ["libdbus-1-3", "libsoup-3.0-0", "libc6"] {
        assert!(depends.contains(&lib), "Depends names {lib}");
    }
    // The app needs WebKitGTK 2.40 (memory.rs hands WebKit memory pressure settings,
    // new in 2.40), and the bundler's own libwebkit2gtk-4.1-0 entry has no version.
    // JavaScriptCore is built from the same source at the same version, and WebKitGTK
    // depends on exactly its own: a minimum here holds for both.
    assert!(
        depends.contains(&"libjavascriptcoregtk-4.1-0 (>= 2.40)"),
        "Depends: {depends:?}"
    );
    for lib in ["libwebkit2gtk-4.1-0", "libgtk-3-0"] {
        assert!(!depends.contains(&lib), "{lib} is the bundler's");
    }
    // The CLI goes on PATH as `casebook`, from its own profile's build (`make release`).
    let cli = deb["files"]["/usr/bin/casebook"].as_str().unwrap();
    assert_eq!(cli, "../target/cli/casebook");
    let cli_manifest = std::fs::read_to_string(here().join("cli/Cargo.toml")).unwrap();
    assert!(cli_manifest.contains("[[bin]]\nname = \"casebook\""));
    for (dest, src) in deb["files"].as_object().unwrap() {
        if !src.as_str().unwrap().contains("target/") {
            assert!(
                here().join(src.as_str().unwrap()).exists(),
                "{dest} from {src}"
            );
        }
    }
    assert!(
        deb["files"]["/usr/share/icons/hicolor/scalable/apps/casebook-app.svg"].is_string(),
        "a scalable icon for the sizes no PNG has"
    );

    let mut sizes = BTreeSet::new();
    for icon in bundle["icon"].as_array().unwrap() {
        let path = here().join(icon.as_str().unwrap());
        // The bundler files `NxN@2x.png` under a scaled folder icon themes skip.
        assert!(
            !icon.as_str().unwrap().contains("@2x"),
            "{icon}: a plain size"
        );
        assert!(path.exists(), "{} exists", path.display());
        if path.extension().is_some_and(|e| e == "png") {
            let (w, h) = png_size(&path);
            assert_eq!(w, h, "{} is square", path.display());
            sizes.insert(w);
        }
    }
    for size in [32, 64, 128, 256, 512] {
        assert!(sizes.contains(&size), "a {size}px icon (have {sizes:?})");
    }
}

#[test]
fn the_desktop_entry_opens_word_and_powerpoint_files() {
    let c = config();
    let template = c["bundle"]["linux"]["deb"]["desktopTemplate"]
        .as_str()
        .unwrap();
    let text = std::fs::read_to_string(here().join(template)).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("[Desktop Entry]"));
    let entry: std::collections::HashMap<&str, &str> =
        lines.filter_map(|l| l.split_once('=')).collect();
    assert_eq!(entry["Type"], "Application");
    assert_eq!(entry["Terminal"], "false");
    let exec: Vec<&str> = entry["Exec"].split(' ').collect();
    assert_eq!(exec[0], "{{exec}}", "the installed app binary");
    assert!(
        exec[1..] == ["%F"] || exec[1..] == ["%U"],
        "Exec takes the files to open: {exec:?}"
    );
    let mime: Vec<&str> = entry["MimeType"].split(';').collect();
    assert!(mime.contains(&DOCX) && mime.contains(&PPTX), "{mime:?}");
    assert_eq!(mime.last(), Some(&""), "the list ends with ';'");
    for key in ["Name", "Icon", "Categories"] {
        assert!(entry.contains_key(key), "{key}");
    }

    // What the bundler makes of it, checked by the freedesktop validator when here.
    let rendered = text
        .replace("{{name}}", "Casebook")
        .replace("{{comment}}", "Evidence-backed writing")
        .replace("{{exec}}", "casebook-app")
        .replace("{{icon}}", "casebook-app");
    assert!(!rendered.contains("{{"), "only the bundler's variables");
    if let Ok(out) = std::process::Command::new("desktop-file-validate")
        .arg("--help")
        .output()
        && out.status.success()
    {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("Casebook.desktop");
        std::fs::write(&file, rendered).unwrap();
        let out = std::process::Command::new("desktop-file-validate")
            .arg(&file)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && !said.contains("error"), "{said}");
    }
}

#[test]
fn a_file_manager_s_command_line_becomes_documents() {
    // What `Exec=casebook-app %F` gives the app for two files chosen in a file manager.
    let argv = [
        "/usr/bin/casebook-app",
        "/home/a/report.docx",
        "/home/a/deck.pptx",
    ]
    .map(String::from);
    assert_eq!(
        casebook_core::desktop::launch::document_paths(&argv, Path::new("/")),
        ["/home/a/report.docx", "/home/a/deck.pptx"]
    );
}
