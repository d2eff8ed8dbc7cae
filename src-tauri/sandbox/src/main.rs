//! `casebook-sandbox`: serves both services' contract on loopback until stopped.

// A function longer than clippy.toml's 150 lines is split (`make lint`); tests are
// exempt: a scenario reads top to bottom.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

use casebook_sandbox::cite_variants::HostileDocument;
use casebook_sandbox::{
    CiteShape, CiteStyle, CiteVariants, DEMO_KEY, ErrorFamily, MissionProtocol, Pace, Placement,
    RateLimit, SandboxConfig,
};
use clap::Parser;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    version,
    about = "Casebook's local sandbox of the citation and investigation services"
)]
struct Args {
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Keep sessions here so they survive a restart.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// A bearer key to accept (repeatable). Without it, the demo key is accepted.
    #[arg(long = "key")]
    keys: Vec<String>,
    /// How fast missions unfold.
    #[arg(long, value_enum, default_value_t = Pace::Realistic)]
    pace: Pace,
    /// Requests per minute each key may make (0: unlimited).
    #[arg(long, default_value_t = RateLimit::default().per_minute)]
    rate_limit: u32,
    /// Events a mission plays unless its create request sets `events` (10-100000).
    #[arg(long)]
    mission_events: Option<u64>,
    /// Milliseconds between a mission's events unless its create request sets
    /// `paceMs` (0-60000); overrides --pace for missions.
    #[arg(long)]
    mission_pace_ms: Option<u64>,
    /// eve protocols: every report is this many `message.appended` deltas long (1-100000)
    /// unless its create request sets `replyDeltas`: one long growing message.
    #[arg(long)]
    mission_reply_deltas: Option<u64>,
    /// The investigation service's wire protocol: one of eve's NDJSON generations
    /// (`eve-a`, the default; `eve-b`, `eve-27`) or the seeds' SSE vocabulary (`legacy`).
    #[arg(long, value_enum, default_value_t = MissionProtocol::EveA)]
    mission_protocol: MissionProtocol,
    /// Where the missions' scripts are drawn from: the n-th mission from "SEED:n", the
    /// same missions on every run.
    #[arg(long, default_value_t = 0)]
    mission_seed: u64,
    /// Cite: refuse (422) a document or essay with no References section.
    #[arg(long)]
    require_references: bool,
    /// Cite: `library` (works from the sandbox's library, a reference list added) or
    /// `existing` (only the document's own entries; nothing appended).
    #[arg(long, value_enum, default_value_t = CiteStyle::Library)]
    cite_style: CiteStyle,
    /// Cite: `end` of the paragraph, or `inside` a sentence (before its full stop).
    #[arg(long, value_enum, default_value_t = Placement::End)]
    placement: Placement,
    /// Cite: `author-year` `(Smith, 2019)`, `numeric` `[3]`, `bracketed` `[Smith 2019]` or
    /// `ibid` (author-year, and `(ibid.)` for the work the paragraph before cited).
    #[arg(long, value_enum, default_value_t = CiteShape::AuthorYear)]
    cite_shape: CiteShape,
    /// Cite: .pptx speaker notes too.
    #[arg(long)]
    cite_notes: bool,
    /// Cite: blank the author, last author, company and manager in docProps.
    #[arg(long)]
    scrub_metadata: bool,
    /// Cite: a fresh random seed each call (results not repeatable).
    #[arg(long)]
    unseeded: bool,
    /// Citation error bodies: default, plain-error, nested, message, detail, problem,
    /// text or html.
    #[arg(long, value_enum, default_value_t = ErrorFamily::Default)]
    error_family: ErrorFamily,
    /// A front with a smaller body limit: bodies over N bytes get its 413 page.
    #[arg(long)]
    front_limit_bytes: Option<u64>,
    /// Cite: hold the answer this many ms after reading the request.
    #[arg(long, default_value_t = 0)]
    slow_cite_ms: u64,
    /// Cite: return the cited document with a hostile zip entry (bomb, lying-bomb, parent-path,
    /// absolute-path, drive-path or symlink).
    #[arg(long, value_enum)]
    hostile_document: Option<HostileDocument>,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let demo = args.keys.is_empty();
    let sandbox = casebook_sandbox::start(SandboxConfig {
        port: args.port,
        data_dir: args.data_dir,
        keys: args.keys,
        pace: args.pace,
        rate_limit: RateLimit {
            per_minute: args.rate_limit,
            ..RateLimit::default()
        },
        mission_events: args.mission_events,
        mission_pace_ms: args.mission_pace_ms,
        mission_reply_deltas: args.mission_reply_deltas,
        mission_protocol: args.mission_protocol,
        mission_seed: args.mission_seed,
        citations: CiteVariants {
            require_references: args.require_references,
            style: args.cite_style,
            placement: args.placement,
            shape: args.cite_shape,
            notes: args.cite_notes,
            scrub_metadata: args.scrub_metadata,
            unseeded: args.unseeded,
            error_family: args.error_family,
            front_limit_bytes: args.front_limit_bytes,
            slow_cite_ms: args.slow_cite_ms,
            hostile_document: args.hostile_document,
        },
    })
    .await?;
    if demo {
        eprintln!("demo key: {DEMO_KEY}");
    }
    // The base URL alone on stdout, so scripts can read it.
    println!("{}", sandbox.base_url());
    tokio::signal::ctrl_c().await?;
    sandbox.stop().await;
    Ok(())
}
