//! What the CLI prints: progress on stderr (only on a terminal), results on stdout.

use casebook_core::citations::Parsed;
use casebook_core::http::Progress;
use casebook_core::missions::{MissionEvent, Payload};
use std::io::IsTerminal;

/// A progress callback that writes one updating line to stderr when it is a terminal.
pub fn progress(what: String) -> impl Fn(Progress) + Send + Sync {
    let tty = std::io::stderr().is_terminal();
    move |p| {
        if !tty {
            return;
        }
        let line = match p {
            Progress::Sending { bytes } => {
                format!("{what}: sending {:.1} MB…", bytes as f64 / 1_048_576.0)
            }
            Progress::RateLimited {
                seconds,
                attempt,
                of,
            } => {
                format!("{what}: rate limited; retry {attempt} of {of} in {seconds} s…")
            }
            Progress::Receiving => format!("{what}: receiving…"),
        };
        eprint!("\r\x1b[2K{line}");
    }
}

/// Ends the progress line.
pub fn done<F>(_progress: &F) {
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
}

pub fn print_parsed(parsed: &Parsed) {
    for p in &parsed.paragraphs {
        let place = p.slide.map(|s| format!("slide {s}, ")).unwrap_or_default();
        println!("[{place}¶{}] {}", p.index, p.text);
    }
    match &parsed.references_heading {
        Some(h) => println!("\n{h} ({} entries)", parsed.references.len()),
        None => println!("\nNo References section."),
    }
    for r in &parsed.references {
        println!("  - {r}");
    }
}

/// One readable line per event; unknown kinds show their raw JSON.
pub fn event_line(e: &MissionEvent) -> String {
    let id = e.id.as_deref().unwrap_or("-");
    let what = match e.payload() {
        Some(Payload::TurnStarted(t)) => t.objective.unwrap_or_default(),
        Some(Payload::Plan(p)) => p.steps.join(" → "),
        Some(Payload::SearchQuery(q)) => q.query.unwrap_or_default(),
        Some(Payload::SourceFound(s)) => format!(
            "{} <{}>",
            s.title.unwrap_or_default(),
            s.url.unwrap_or_default()
        ),
        Some(Payload::Evidence(ev)) => format!("“{}”", ev.quote.unwrap_or_default()),
        Some(Payload::FindingVerified(f)) => {
            format!(
                "{} ({:.0}%)",
                f.claim.unwrap_or_default(),
                f.confidence.unwrap_or(0.0) * 100.0
            )
        }
        Some(Payload::SpendUpdated(s)) => {
            format!(
                "${:.2} of ${:.2}",
                s.spent_usd.unwrap_or(0.0),
                s.budget_usd.unwrap_or(0.0)
            )
        }
        Some(Payload::ReportFinal(r)) => r.title.unwrap_or_default(),
        None => e.data.to_string(),
    };
    format!("[{id}] {}: {what}", e.event)
}
