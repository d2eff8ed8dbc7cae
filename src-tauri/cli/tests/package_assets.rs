//! The manual pages and shell completions the package installs, as `scripts/package.sh`
//! has the CLI write them (`casebook __package-assets DIR`): one page for every
//! (sub)command `--help` lists, pages `man` reads without a warning, and a bash
//! completion that completes `casebook mission <TAB>`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_casebook");

fn run(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "casebook {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands `casebook <path> --help` lists (its "Commands:" section).
fn subcommands(path: &[&str]) -> Vec<String> {
    let mut args = path.to_vec();
    args.push("--help");
    let help = run(&args);
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command path, `casebook` first: ["keys"], ["keys", "set"], ...
fn every_command() -> Vec<Vec<String>> {
    let mut all = vec![vec![]];
    let mut i = 0;
    while i < all.len() {
        let path: Vec<&str> = all[i].iter().map(String::as_str).collect();
        for sub in subcommands(&path) {
            let mut next = all[i].clone();
            next.push(sub);
            all.push(next);
        }
        i += 1;
    }
    all
}

fn assets() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    run(&["__package-assets", dir.path().to_str().unwrap()]);
    dir
}

#[test]
fn every_command_has_a_manual_page_that_man_reads_cleanly() {
    let dir = assets();
    let man = dir.path().join("man");
    let commands = every_command();
    assert!(
        commands.len() >= 15,
        "keys, mission and their subcommands: {commands:?}"
    );
    let mut expected = BTreeSet::new();
    for path in &commands {
        let name = std::iter::once("casebook")
            .chain(path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("-");
        let page = std::fs::read_to_string(man.join(format!("{name}.1")))
            .unwrap_or_else(|e| panic!("{name}.1: {e}"));
        // .TH NAME SECTION DATE SOURCE MANUAL, the date the changelog's newest entry's.
        let title = page.lines().find(|l| l.starts_with(".TH ")).unwrap();
        let date = title.split(' ').nth(3).unwrap_or_default();
        assert!(
            title.starts_with(&format!(".TH {} 1 ", name.to_uppercase()))
                && date.len() == 10
                && date.chars().all(|c| c.is_ascii_digit() || c == '-'),
            "{name}.1's title: {title}"
        );
        assert!(page.contains(".SH NAME"), "{name}.1 has NAME");
        // Each page names the ones below it, which the parent's page names in turn.
        let escaped = name.replace('-', "\\-");
        for sub in subcommands(&path.iter().map(String::as_str).collect::<Vec<_>>()) {
            assert!(
                page.contains(&format!("{escaped}\\-{sub}")),
                "{name}.1 lists {sub}"
            );
        }
        expected.insert(format!("{name}.1"));
    }
    let written: BTreeSet<String> = std::fs::read_dir(&man)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(written, expected, "a page for each command, and no other");
    assert!(
        !written.iter().any(|p| p.contains("package-assets")),
        "the packaging word has no page"
    );

    // What lintian runs on each page (man-db), where it is installed.
    if Command::new("man").arg("--version").output().is_ok() {
        for page in &written {
            let out = Command::new("man")
                .args(["--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z"])
                .arg(man.join(page))
                .env("MANROFFSEQ", "")
                .env("MANWIDTH", "80")
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && said.trim().is_empty(),
                "{page}: {said}"
            );
        }
    }
}

#[test]
fn completions_for_bash_zsh_and_fish_know_every_subcommand() {
    let dir = assets();
    let share = dir.path().join("usr/share");
    let bash = share.join("bash-completion/completions/casebook");
    let zsh = share.join("zsh/vendor-completions/_casebook");
    let fish = share.join("fish/vendor_completions.d/casebook.fish");
    let commands = every_command();
    for file in [&bash, &zsh, &fish] {
        let text = std::fs::read_to_string(file).unwrap();
        for path in &commands {
            if let Some(last) = path.last() {
                assert!(text.contains(last.as_str()), "{}: {last}", file.display());
            }
        }
        assert!(!text.contains("package-assets"), "{}", file.display());
    }

    // What a user's bash does on `casebook mission <TAB>`.
    let missions = subcommands(&["mission"]);
    let got = complete_in_bash(&bash, "casebook mission ");
    for sub in &missions {
        assert!(got.contains(sub), "mission {sub} in {got:?}");
    }
    for sub in ["start", "watch", "list"] {
        assert!(missions.iter().any(|m| m == sub), "{missions:?}");
    }
    // And of options, `casebook cite --mo<TAB>`.
    assert_eq!(complete_in_bash(&bash, "casebook cite --mo"), ["--mode"]);
}

/// The words bash's completion offers for `line`, as bash-completion would ask.
fn complete_in_bash(script: &Path, line: &str) -> Vec<String> {
    let words: Vec<&str> = line.split(' ').collect();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT={}; \
         _casebook casebook '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
        line.len(),
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}
