//! What the CLI prints: progress on stderr (only on a terminal), results on stdout.

use crate::terminal::{self, say, tell};
use casebook_core::account::AccountView;
use casebook_core::citations::client::{Preview, PreviewSource};
use casebook_core::citations::jobs::Cited;
use casebook_core::citations::review::ReviewCopy;
use casebook_core::citations::summary::CiteSummary;
use casebook_core::missions::client::Delivered;
use casebook_core::missions::client::agent::AgentInfo;
use casebook_core::missions::conversation::{Conversation, ItemKind};
use casebook_core::missions::spend::dollars;
use casebook_core::missions::spend::{BudgetLevel, BudgetUse};
use casebook_core::missions::store::across::{HitPlace, MissionHits};
use casebook_core::missions::store::rfc3339;
use casebook_core::missions::store::{MissionRecord, MissionStatus, StoredEvent};
use casebook_core::missions::subagents::SubAgent;
use casebook_core::net::http::Progress;
use casebook_core::{Error, ErrorCode};
use std::io::{IsTerminal, Write};
use std::path::Path;

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
                format!("{what}: the service is busy; retry {attempt} of {of} in {seconds} s…")
            }
            Progress::Uploading { sent, of } => {
                format!("{what}: sending… {}%", sent * 100 / of.max(1))
            }
            Progress::Waiting { seconds } => {
                format!("{what}: waiting for the service… {seconds} s")
            }
            Progress::Receiving => format!("{what}: receiving…"),
        };
        eprint!("\r\x1b[2K{}", terminal::safe(&line));
    }
}

/// Ends the progress line.
pub fn done<F>(_progress: &F) {
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
}

/// Said before citing a document (or text) in which Casebook's own reading finds no
/// References section: the words of the window's card.
pub fn no_references(text: bool) -> String {
    let what = if text { "this text" } else { "this document" };
    format!(
        "No References section found. The service may refuse {what}, or add a References section of its own."
    )
}

/// One line of JSON, with what a terminal would obey escaped ([`terminal::json`]).
pub fn json_line(v: &impl serde::Serialize) -> String {
    terminal::json(serde_json::to_string(v).unwrap_or_default())
}

fn json_pretty(v: &impl serde::Serialize) -> String {
    terminal::json(serde_json::to_string_pretty(v).unwrap_or_default())
}

/// Paragraphs and References when the service's answer has them (or Casebook's
/// own reading, with a note on stderr), otherwise the answer as it came.
pub fn print_preview(preview: &Preview, json: bool) {
    let parsed = match preview {
        Preview::Raw { text, note } => {
            tell!("{note}");
            say!("{text}");
            return;
        }
        Preview::Paragraphs { parsed, source } => {
            if let PreviewSource::Local { note } = source {
                tell!("{note}");
            }
            parsed
        }
    };
    if json {
        println!("{}", json_pretty(parsed));
        return;
    }
    for p in &parsed.paragraphs {
        let place = p.slide.map(|s| format!("slide {s}, ")).unwrap_or_default();
        say!("[{place}¶{}] {}", p.index, p.text);
    }
    match &parsed.references_heading {
        Some(h) => say!("\n{h} ({} entries)", parsed.references.len()),
        None => println!("\nNo References section."),
    }
    for r in &parsed.references {
        say!("  - {r}");
    }
}

/// Where a cite's results went.
pub struct Saved<'a> {
    pub output: Option<&'a Path>,
    /// The review copy, when the output is one.
    pub review: Option<&'a ReviewCopy>,
    pub list: Option<&'a Path>,
}

/// What citing changed: on stdout, unless the cited text itself went there.
pub fn print_cited(cited: &Cited, saved: &Saved<'_>, json: bool) {
    let s = &cited.summary;
    let text = if json {
        json_line(&serde_json::json!({
            "output": saved.output.map(|p| p.display().to_string()),
            "kind": cited.kind,
            "size": cited.len,
            "summary": s,
            "summaryNote": cited.summary_note,
            "reviewCopy": saved.review,
            "reviewList": saved.list.map(|p| p.display().to_string()),
        }))
    } else {
        let mut t = String::new();
        match (saved.output, saved.review) {
            (Some(p), Some(r)) => t.push_str(&format!(
                "Saved {} for review in Word: {} tracked insertion{}\n",
                p.display(),
                r.insertions.len(),
                plural(r.insertions.len() as u32)
            )),
            (Some(p), None) => t.push_str(&format!("Saved {}\n", p.display())),
            (None, _) => {}
        }
        if let Some(p) = saved.list {
            t.push_str(&format!("Saved the review list {}\n", p.display()));
        }
        t.push_str(&what_changed(s));
        if let Some(note) = &cited.summary_note {
            t.push_str(&format!("\n{note}"));
        }
        t
    };
    if saved.output.is_some() {
        say!("{text}");
    } else {
        tell!("{text}");
    }
}

/// "3 paragraphs changed, 5 citations inserted, 2 references added".
pub fn what_changed(s: &CiteSummary) -> String {
    let mut t = format!(
        "{} paragraph{} changed, {} citation{} inserted",
        s.paragraphs_changed,
        plural(s.paragraphs_changed),
        s.citations_inserted,
        plural(s.citations_inserted),
    );
    if s.citations_in_notes > 0 {
        t.push_str(&format!(" ({} in speaker notes)", s.citations_in_notes));
    }
    if s.references_added > 0 {
        t.push_str(&format!(
            ", {} reference{} added",
            s.references_added,
            plural(s.references_added)
        ));
    } else {
        t.push_str(", references unchanged");
    }
    t
}

/// Said when tracked changes are asked of what cannot hold them.
pub fn no_tracked_changes(text: bool) -> String {
    let what = if text {
        "Text has no tracked changes"
    } else {
        "PowerPoint has no tracked changes"
    };
    format!("{what}: the cited copy is saved as it is; --review-list FILE lists each citation.")
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// One line an event: `{"id","event","data"}` with `--json`, else the card's line.
pub fn print_events(events: &[StoredEvent], json: bool) {
    let mut out = std::io::stdout().lock();
    for e in events {
        let line = if json {
            json_line(
                &serde_json::json!({"id": e.event.id, "event": e.event.event, "data": e.event.data}),
            )
        } else {
            let id = e.event.id.as_deref().unwrap_or("-");
            terminal::safe(&format!("[{id}] {}: {}", e.event.event, e.card.line())).into_owned()
        };
        let _ = writeln!(out, "{line}");
    }
    let _ = out.flush();
}

pub fn print_missions(missions: &[MissionRecord], json: bool) {
    if json {
        println!("{}", json_line(&missions));
        return;
    }
    for m in missions {
        say!(
            "{}  {:<12} {}  {}",
            m.session_id,
            m.status.as_str(),
            rfc3339(m.created_at),
            m.headline(200)
        );
    }
}

/// `casebook mission search`: a line a hit, the best first: the mission's session id, its
/// status, where (the objective, or item N), and the text around the match; then the
/// objective it belongs to.
pub fn print_mission_hits(found: &MissionHits, json: bool) {
    if json {
        println!("{}", json_line(found));
        return;
    }
    if found.hits.is_empty() {
        tell!("Nothing found for {:?}.", found.query);
        return;
    }
    for h in &found.hits {
        let place = match &h.place {
            HitPlace::Objective => "objective".to_owned(),
            HitPlace::Item { index, .. } => format!("item {index}"),
        };
        say!(
            "{}  {:<12} {:<10} {}\n    in: {}",
            h.session_id,
            h.status.as_str(),
            place,
            h.snippet,
            h.headline
        );
    }
}

/// `casebook agent`: what the agent at the API base says of itself, or that the server
/// has no info route.
pub fn print_agent(api_base: &str, info: Option<&AgentInfo>, json: bool) {
    if json {
        println!(
            "{}",
            json_line(&serde_json::json!({"apiBase": api_base, "info": info}))
        );
        return;
    }
    let Some(info) = info else {
        say!(
            "{api_base}: the server has no info route (eve before it had one); missions still work."
        );
        return;
    };
    say!("{api_base}: {}", info.label());
    if let Some(d) = &info.description {
        say!("  {d}");
    }
    if let Some(m) = &info.mode {
        say!("  mode: {m}");
    }
}

/// The signed-in account; signed out and expired are errors (exit 3), so scripts can tell.
pub fn print_account(view: AccountView, json: bool) -> Result<(), Error> {
    let account = match view {
        AccountView::SignedIn { account, .. } => account,
        AccountView::Expired { message, .. } => {
            return Err(Error::new(ErrorCode::Unauthorized, message));
        }
        AccountView::SignedOut => {
            return Err(Error::new(
                ErrorCode::Unauthorized,
                format!(
                    "Not signed in: sign in from the app (Settings → Account), or set {}.",
                    casebook_core::keys::SESSION_ENV
                ),
            ));
        }
    };
    if json {
        println!("{}", json_pretty(&account));
        return Ok(());
    }
    let who: Vec<String> = [&account.name, &account.email]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let known = !who.is_empty() || !account.usage.is_empty() || account.has_key_list;
    if !who.is_empty() || account.id.is_some() {
        let id = account
            .id
            .as_ref()
            .map(|i| format!(" ({i})"))
            .unwrap_or_default();
        say!("Account: {}{id}", who.join(" · "));
    }
    if !account.usage.is_empty() {
        println!("Usage:");
        let width = account
            .usage
            .iter()
            .map(|u| terminal::safe(&u.label).chars().count())
            .max()
            .unwrap_or(0);
        for u in &account.usage {
            let label = terminal::safe(&u.label);
            say!("  {label:<width$}  {}", u.value);
        }
    }
    if account.has_key_list {
        println!("Keys:");
        if account.keys.is_empty() {
            println!("  none");
        }
        for k in &account.keys {
            let mut parts = vec![k.name.clone().unwrap_or_else(|| "(unnamed)".into())];
            parts.extend(k.masked.clone());
            if let Some(c) = &k.created {
                parts.push(format!("created {c}"));
            }
            say!("  {}", parts.join("  "));
        }
    }
    if !known {
        // Nothing Casebook recognises: the answer as it came.
        say!("{}", account.raw);
    }
    Ok(())
}

/// A follow-up the service took.
pub fn print_delivered(session_id: &str, sent: &Delivered, json: bool) {
    if json {
        println!(
            "{}",
            json_line(
                &serde_json::json!({"sessionId": session_id, "deliveryId": sent.delivery_id})
            )
        );
    } else {
        match &sent.delivery_id {
            Some(d) => say!("{session_id} accepted ({d})"),
            None => say!("{session_id} accepted"),
        }
    }
    let _ = std::io::stdout().flush();
}

/// `mission show`: where the mission stands, the conversation (messages, steps with
/// their sources, questions), what it asks, and the spend.
pub fn print_conversation(record: &MissionRecord, conv: &Conversation, json: bool) {
    let summary = conv.summary();
    let c = &summary;
    let facts = conv.facts();
    let budget = BudgetUse::of(facts.spent_usd, record.budget_cents);
    if json {
        println!(
            "{}",
            json_line(&serde_json::json!({
                "sessionId": record.session_id,
                "status": record.status,
                "pending": c.pending,
                "signIns": c.sign_ins,
                "messages": c.messages,
                "items": conv.items,
                "sources": conv.sources,
                "spentUsd": facts.spent_usd,
                "budgetUsd": (record.budget_cents > 0).then(|| record.budget_cents as f64 / 100.0),
                "budget": budget,
                "apiBase": record.api_base,
                "activity": facts.activity,
            }))
        );
        return;
    }
    say!("{}  {}", record.session_id, record.status.as_str());
    if record.status == MissionStatus::Expired {
        say!(
            "The service no longer keeps this mission's history (it expired): what follows is what this computer stored."
        );
    }
    match &budget {
        Some(b) if b.level == BudgetLevel::Warning => say!("warning: spent {}", b.text),
        Some(b) if b.level == BudgetLevel::Exceeded => say!("BUDGET EXCEEDED: spent {}", b.text),
        Some(b) => say!("spent {}", b.text),
        None => {
            if let Some(spent) = facts.spent_usd {
                say!("spent {}", dollars(spent));
            }
        }
    }
    for item in &conv.items {
        let files = || {
            for f in &item.files {
                say!("  [file] {}", f.line());
            }
        };
        match item.kind {
            ItemKind::User => {
                say!("\n[you]\n{}", item.text.trim_end());
                files();
            }
            ItemKind::Assistant if item.narration => {
                say!("\n[agent, working]\n{}", item.text.trim_end());
                files();
            }
            ItemKind::Assistant => {
                say!("\n[agent]\n{}", item.text.trim_end());
                files();
            }
            ItemKind::Reasoning => {}
            ItemKind::Tool => {
                say!("  - {}", item.text);
                if let Some(step) = &item.step {
                    if let Some(e) = &step.error {
                        say!("    failed: {e}");
                    }
                    for src in &step.sources {
                        say!("    {} <{}>", src.title.as_deref().unwrap_or(""), src.url);
                    }
                    if let Some(child) = &step.child {
                        say!(
                            "    its conversation: casebook mission show {} --agent {}",
                            record.session_id,
                            child.call_id
                        );
                    }
                }
            }
            ItemKind::Question => {
                if let Some(r) = &item.request
                    && let Some(words) = r.outcome_words()
                {
                    say!("\n[asked] {} ({words})", r.prompt);
                }
            }
            ItemKind::SignIn => {
                if let Some(words) = item.sign_in.as_ref().and_then(|s| s.outcome_words()) {
                    say!("\n[{}] {words}", item.text);
                }
            }
            ItemKind::Turn => {}
            ItemKind::Failure => say!("\n[failed] {}", item.text),
            ItemKind::Result => say!("\n[background result]\n{}", item.text.trim_end()),
        }
    }
    for s in &c.sign_ins {
        say!(
            "\n[sign in to {}] {}",
            s.name,
            s.description.as_deref().unwrap_or("")
        );
        if let Some(url) = &s.url {
            say!("  open {url}");
        }
        if let Some(code) = &s.user_code {
            say!("  and enter the code {code}");
        }
        if let Some(until) = &s.expires_at {
            say!("  before {until}");
        }
        if let Some(how) = &s.instructions {
            say!("  {how}");
        }
        say!("  Nothing to answer here: `casebook mission watch` goes on once you have signed in.");
    }
    for p in &c.pending {
        say!(
            "\n[asks: {}] {}  (request {})",
            p.kind,
            p.prompt,
            p.request_id
        );
        if let Some(refusal) = &p.refusal {
            say!("  {refusal}");
        }
        for o in &p.options {
            say!("  --option {}  {}", shell_word(&o.id), o.label);
        }
        if p.allow_freeform {
            say!("  --text \"...\"  (free text is allowed)");
        }
    }
}

/// `word` as one shell word to copy: as it is when it is plain, else in single quotes
/// (eve 1.x's question options are their labels, spaces and all).
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.,:/@+=".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// A sub-agent's own conversation: what it was asked, its steps with their sources, its
/// reply.
pub fn print_subagent(parent: &str, sub: &SubAgent, json: bool) {
    if json {
        println!(
            "{}",
            json_line(&serde_json::json!({
                "parent": parent,
                "callId": sub.call_id,
                "sessionId": sub.session_id,
                "name": sub.name,
                "status": sub.status,
                "messages": sub.messages,
                "items": sub.items,
                "sources": sub.sources,
                "more": sub.more,
                "stale": sub.stale,
                "readAt": sub.read_at,
            }))
        );
        return;
    }
    say!(
        "{}  {} (sub-agent of {parent}, call {})  {}",
        sub.session_id,
        sub.name,
        sub.call_id,
        sub.status.as_str()
    );
    if let Some(why) = &sub.stale {
        say!("Not read again ({why}): what follows is what this computer stored.");
    }
    for item in &sub.items {
        match item.kind {
            ItemKind::User => say!("\n[asked]\n{}", item.text.trim_end()),
            ItemKind::Assistant if item.narration => {
                say!("\n[{}, working]\n{}", sub.name, item.text.trim_end())
            }
            ItemKind::Assistant => say!("\n[{}]\n{}", sub.name, item.text.trim_end()),
            ItemKind::Tool => {
                say!("  - {}", item.text);
                for src in item.step.iter().flat_map(|st| &st.sources) {
                    say!("    {} <{}>", src.title.as_deref().unwrap_or(""), src.url);
                }
            }
            ItemKind::Failure => say!("\n[failed] {}", item.text),
            _ => {}
        }
    }
    if !sub.sources.is_empty() {
        say!("\nSources:");
        for src in &sub.sources {
            say!("  {} <{}>", src.title.as_deref().unwrap_or(""), src.url);
        }
    }
    if sub.more {
        say!("\nIt has written more: run this again to read on.");
    }
}
