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
    assert_eq!(bundle["targets"], serde_json::json!(["deb", "rpm"]));
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
    // The CLI goes on PATH as `casebook`, from its own profile's build (`make release`),
    // wherever the build is: scripts/package.sh stages what only exists once built and
    // hands the bundler their paths, so no file here may name a build folder.
    let cli_manifest = std::fs::read_to_string(here().join("cli/Cargo.toml")).unwrap();
    assert!(cli_manifest.contains("[[bin]]\nname = \"casebook\""));
    let package_sh = std::fs::read_to_string(here().join("../scripts/package.sh")).unwrap();
    assert!(
        package_sh.contains("/usr/bin/casebook \"$cli\""),
        "package.sh installs the CLI"
    );
    for format in ["deb", "rpm"] {
        for (dest, src) in bundle["linux"][format]["files"].as_object().unwrap() {
            let src = src.as_str().unwrap();
            assert!(
                !src.contains("target/"),
                "{dest} from {src}: a build folder"
            );
            assert!(here().join(src).exists(), "{dest} from {src}");
        }
    }
    assert_eq!(
        bundle["linux"]["rpm"]["files"], deb["files"],
        "the .rpm installs what the .deb does"
    );
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

/// The workspace's version, which the packages carry.
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn run(program: &str, args: &[&str]) -> Option<std::process::Output> {
    std::process::Command::new(program).args(args).output().ok()
}

#[test]
fn the_control_file_s_description_is_what_debian_asks_for() {
    let c = config();
    // Debian policy 3.4.1 (lintian: synopsis-too-long and friends).
    let synopsis = c["bundle"]["shortDescription"].as_str().unwrap();
    assert!(synopsis.len() < 80, "{synopsis}");
    assert!(!synopsis.ends_with('.'), "no full stop: {synopsis}");
    let first = synopsis.split(' ').next().unwrap().to_lowercase();
    assert!(!["a", "an", "the"].contains(&first.as_str()), "{synopsis}");
    assert!(
        !synopsis.to_lowercase().starts_with("casebook"),
        "{synopsis}"
    );
    let long = c["bundle"]["longDescription"].as_str().unwrap();
    for line in long.lines() {
        assert!(line.len() <= 80, "a long description line over 80: {line}");
    }
    // The Maintainer field (the bundler takes the app crate's authors): name <address>.
    let manifest = std::fs::read_to_string(here().join("Cargo.toml")).unwrap();
    let authors = manifest
        .lines()
        .find(|l| l.starts_with("authors = "))
        .expect("the app crate has authors");
    assert!(
        authors.contains(" <") && authors.contains("@") && authors.contains(">\""),
        "{authors}"
    );
}

#[test]
fn the_changelog_is_debian_s_format_at_this_version() {
    let path = here().join("linux/changelog");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with(&format!("casebook ({VERSION}) ")),
        "the newest entry is this version"
    );
    let manifest = std::fs::read_to_string(here().join("Cargo.toml")).unwrap();
    let maintainer = text.lines().find(|l| l.starts_with(" -- ")).unwrap();
    let who = &maintainer[4..maintainer.find(">").unwrap() + 1];
    assert!(manifest.contains(who), "signed by the Maintainer: {who}");
    // dpkg's own parser, where it is (dpkg-dev comes with build-essential).
    if let Some(out) = run(
        "dpkg-parsechangelog",
        &["-l", path.to_str().unwrap(), "-S", "Version"],
    ) {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), VERSION);
    }
}

#[test]
fn the_app_s_manual_page_reads_cleanly() {
    let page = here().join("linux/casebook-app.1");
    let text = std::fs::read_to_string(&page).unwrap();
    assert!(text.contains(".TH CASEBOOK-APP 1"));
    assert!(text.contains("casebook-app \\- "), "a whatis line");
    let package_sh = std::fs::read_to_string(here().join("../scripts/package.sh")).unwrap();
    assert!(package_sh.contains("src-tauri/linux/casebook-app.1"));
    // man-db's warnings are what lintian reports (groff-message).
    if let Some(out) = run(
        "man",
        &[
            "--warnings",
            "-E",
            "UTF-8",
            "-l",
            "-Tutf8",
            "-Z",
            page.to_str().unwrap(),
        ],
    ) {
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && said.trim().is_empty(), "{said}");
    }
}

/// The text of every `<tag>` in `xml`, in order (the metainfo is flat enough for this).
fn all<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(at) = rest.find(&open) {
        let after = &rest[at + open.len()..];
        let Some(gt) = after.find('>') else { break };
        if !after.starts_with(['>', ' ']) {
            rest = after;
            continue;
        }
        let body = &after[gt + 1..];
        let end = body.find(&close).unwrap_or(0);
        out.push(body[..end].trim());
        rest = &body[end..];
    }
    out
}

#[test]
fn the_appstream_metainfo_describes_the_installed_app() {
    let c = config();
    let dest = "/usr/share/metainfo/app.casebook.desktop.metainfo.xml";
    let src = c["bundle"]["linux"]["deb"]["files"][dest].as_str().unwrap();
    let path = here().join(src);
    let xml = std::fs::read_to_string(&path).unwrap();

    assert_eq!(all(&xml, "id"), [c["identifier"].as_str().unwrap()]);
    // Software centres find the app through the desktop entry the bundler installs,
    // named after productName.
    assert_eq!(
        all(&xml, "launchable"),
        [format!("{}.desktop", c["productName"].as_str().unwrap())]
    );
    assert_eq!(
        all(&xml, "summary"),
        [c["bundle"]["shortDescription"].as_str().unwrap()]
    );
    assert_eq!(all(&xml, "project_license"), ["MIT OR Apache-2.0"]);
    assert!(xml.contains("<description>"));

    // The types it opens are the desktop entry's.
    let desktop = std::fs::read_to_string(here().join("linux/casebook.desktop")).unwrap();
    let mime: BTreeSet<&str> = desktop
        .lines()
        .find_map(|l| l.strip_prefix("MimeType="))
        .unwrap()
        .split(';')
        .filter(|m| !m.is_empty())
        .collect();
    let provided: BTreeSet<&str> = all(&xml, "mediatype").into_iter().collect();
    assert_eq!(provided, mime);
    assert!(provided.contains(DOCX) && provided.contains(PPTX));

    // Screenshots are the README's, by their place in the repository.
    let shots = all(&xml, "image");
    assert!(shots.len() >= 3, "{shots:?}");
    for url in shots {
        let rel = &url[url.find("/docs/screenshots/").expect(url) + 1..];
        assert!(here().join("..").join(rel).exists(), "{url}: {rel} exists");
    }
    // Release notes for this version first.
    let release = xml.find("<release ").expect("a release");
    assert!(
        xml[release..].starts_with(&format!("<release version=\"{VERSION}\"")),
        "the newest release is {VERSION}"
    );

    // AppStream's validator, as software centres' tooling runs it, where it is.
    if let Some(out) = run(
        "appstreamcli",
        &["validate", "--no-net", "--pedantic", path.to_str().unwrap()],
    ) {
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{said}");
        assert!(!said.contains("W:") && !said.contains("E:"), "{said}");
    }
}

#[test]
fn the_copyright_file_lays_cargo_about_s_findings_out_as_dep5() {
    // A small answer of cargo-about's shape (`cargo about generate --format json`), and
    // one npm package; scripts/copyright.sh hands the formatter the real ones.
    let mit = "Permission is hereby granted, free of charge, to any person.";
    let about = serde_json::json!({
        "overview": [],
        "licenses": [
            {"id": "MIT", "text": format!("MIT License\n\nCopyright (c) 2016 Jane Doe\n\n{mit}"),
             "used_by": [{"crate": {"name": "a", "version": "1.0.0", "authors": ["Jane"]}}]},
            {"id": "MIT", "text": format!("Copyright <year> <copyright holders>\n\n{mit}"),
             "used_by": [{"crate": {"name": "b", "version": "2.0.0", "authors": ["Bob <b@b.org>"]}},
                         {"crate": {"name": "d", "version": "0.3.0", "authors": []}}]},
            {"id": "Apache-2.0",
             "text": "Apache License\nVersion 2.0, January 2004\n\"Licensor\" shall mean the\n\
                      copyright owner or entity\nCopyright [yyyy] [name of copyright owner]\n\
                      TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION",
             "used_by": [{"crate": {"name": "c", "version": "0.1.0", "authors": []}}]},
            {"id": "ISC", "text": "Copyright 2015 Ann\n\nPermission to use, copy, modify.",
             "used_by": [{"crate": {"name": "d", "version": "0.3.0", "authors": []}}]},
        ],
        "crates": [],
    });
    let npm = serde_json::json!([{"name": "svelte", "version": "5.0.0", "license": "MIT",
        "text": format!("Copyright (c) 2016-2025 Svelte Contributors\n\n{mit}"), "authors": []}]);
    let dir = tempfile::tempdir().unwrap();
    let (a, n) = (dir.path().join("app.json"), dir.path().join("npm.json"));
    std::fs::write(&a, about.to_string()).unwrap();
    std::fs::write(&n, npm.to_string()).unwrap();
    let script = here().join("../scripts/dep5-copyright.mjs");
    let out = std::process::Command::new("node")
        .arg(&script)
        .args([&a, &n])
        .output()
        .expect("node (the UI's build needs it too)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let paragraphs: Vec<&str> = text.trim_end().split("\n\n").collect();

    assert!(paragraphs[0].starts_with(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
    ));
    assert!(paragraphs[1].starts_with("Files: *\nCopyright: 2026 "));
    assert!(paragraphs[1].ends_with("\nLicense: MIT or Apache-2.0"));
    let mit_text = format!("License: MIT\n {mit}");
    let expect = [
        // Copyright lines from the crate's licence text, without the word itself.
        "Files: cargo/a-1.0.0/*\nCopyright: 2016 Jane Doe\nLicense: MIT",
        // A template's blank is no holder: the crate's authors are.
        "Files: cargo/b-2.0.0/*\nCopyright: Bob <b@b.org>\nLicense: MIT",
        // Nothing at all: its authors, by name.
        "Files: cargo/c-0.1.0/*\nCopyright: The c authors\nLicense: Apache-2.0",
        // Under two licences (an AND): both.
        "Files: cargo/d-0.3.0/*\nCopyright: 2015 Ann\nLicense: MIT and ISC",
        "Files: npm/svelte-5.0.0/*\nCopyright: 2016-2025 Svelte Contributors\nLicense: MIT",
        // Debian has Apache-2.0: a pointer, not the text (lintian's
        // copyright-file-contains-full-apache-2-license).
        "License: Apache-2.0\n On Debian systems, the full text of the Apache License, \
         Version 2.0\n can be found in /usr/share/common-licenses/Apache-2.0.",
        "License: ISC\n Permission to use, copy, modify.",
        // Each licence's text once (the one most packages ship), without any package's
        // copyright lines.
        mit_text.as_str(),
    ];
    assert_eq!(&paragraphs[2..], expect);
    for line in text.lines() {
        assert!(
            line.is_empty() || !line.trim().is_empty(),
            "a blank line inside a field is \" .\": {line:?}"
        );
    }
}
