//! The manual pages and shell completions the package installs, written from the
//! command line's own definition (`Cli`), so they cannot drift from it.
//! `scripts/package.sh` runs `casebook __package-assets DIR` on the very binary it
//! packs. The word is read before clap parses anything, so it is in no help, no
//! completion and no manual page; it writes files and starts nothing else.

use clap::CommandFactory;
use clap_complete::Shell;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};
use std::io;
use std::path::Path;
use std::process::ExitCode;

/// The first argument that asks for the files instead of a command.
pub const WORD: &str = "__package-assets";

/// The shells the package has completions for, with where each looks for them
/// (Debian's bash-completion, zsh and fish packages).
pub const SHELLS: [(Shell, &str); 3] = [
    (
        Shell::Bash,
        "usr/share/bash-completion/completions/casebook",
    ),
    (Shell::Zsh, "usr/share/zsh/vendor-completions/_casebook"),
    (
        Shell::Fish,
        "usr/share/fish/vendor_completions.d/casebook.fish",
    ),
];

/// `Some(exit code)` when the command line is `casebook __package-assets DIR`.
pub fn run_if_asked() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(WORD.as_ref()) {
        return None;
    }
    let (Some(dir), None) = (args.next(), args.next()) else {
        eprintln!("usage: casebook {WORD} DIR");
        return Some(ExitCode::from(2));
    };
    Some(match write(Path::new(&dir)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("casebook: {}: {e}", Path::new(&dir).display());
            ExitCode::FAILURE
        }
    })
}

/// Writes `DIR/man/casebook.1` and one page per subcommand (`casebook-mission-start.1`,
/// as git does), and each shell's completions at its place under `DIR/`.
fn write(dir: &Path) -> io::Result<()> {
    let man = dir.join("man");
    std::fs::create_dir_all(&man)?;
    let mut cmd = crate::Cli::command().disable_help_subcommand(true);
    cmd.build();
    man_pages(&cmd, &man, None)?;

    for (shell, place) in SHELLS {
        let path = dir.join(place);
        std::fs::create_dir_all(path.parent().expect("a file under DIR"))?;
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut crate::Cli::command(), "casebook", &mut out);
        std::fs::write(path, out)?;
    }
    Ok(())
}

/// The date of the newest entry in the package's changelog (`2026-11-25`): the pages
/// change with releases, and a date from the build's clock would make every package
/// differ.
fn release_date() -> String {
    const CHANGELOG: &str = include_str!("../../linux/changelog");
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    // " -- Name <address>  Wed, 25 Nov 2026 12:00:00 +0000"
    let trailer = CHANGELOG.lines().find(|l| l.starts_with(" -- "));
    let date = trailer.and_then(|l| l.split_once(">  ")).map(|(_, d)| d);
    let parts: Vec<&str> = date
        .map(|d| d.split_whitespace().collect())
        .unwrap_or_default();
    match parts.as_slice() {
        [_, day, month, year, ..] => {
            let m = MONTHS.iter().position(|m| m == month).map_or(0, |i| i + 1);
            format!("{year}-{m:02}-{:0>2}", day)
        }
        _ => String::from("-"),
    }
}

/// This command's page, then its subcommands' (hidden ones have none).
fn man_pages(cmd: &clap::Command, dir: &Path, parent: Option<&str>) -> io::Result<()> {
    let name = cmd.get_display_name().unwrap_or(cmd.get_name()).to_owned();
    let subs: Vec<&clap::Command> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    for sub in &subs {
        man_pages(sub, dir, Some(&name))?;
    }
    let page = Man::new(cmd.clone())
        .title(name.to_uppercase())
        .date(release_date())
        .source(format!("Casebook {}", env!("CARGO_PKG_VERSION")))
        .manual("Casebook Manual");
    let mut text = Vec::new();
    page.render(&mut text)?;

    // SEE ALSO: the page above this one and those below it.
    let mut see = Vec::new();
    if let Some(parent) = parent {
        see.push(parent.to_owned());
    }
    see.extend(
        subs.iter()
            .map(|s| s.get_display_name().unwrap_or(s.get_name()).to_owned()),
    );
    if parent.is_none() {
        see.push("casebook-app".to_owned());
    }
    let mut also = Roff::default();
    also.control("SH", ["SEE ALSO"]);
    let last = see.len().saturating_sub(1);
    for (i, page) in see.iter().enumerate() {
        let sep = if i == last { "" } else { "," };
        also.text([bold(page.as_str()), roman(format!("(1){sep}"))]);
    }
    // Without a second preamble: this goes on the page rendered above.
    text.extend(also.to_roff().into_bytes());
    std::fs::write(dir.join(format!("{name}.1")), text)
}
