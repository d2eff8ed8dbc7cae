//! `casebook-sandbox`: serves both services' contract on loopback until stopped.

use casebook_sandbox::{DEMO_KEY, MissionProtocol, Pace, RateLimit, SandboxConfig};
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
    /// The investigation service's wire protocol: today's SSE (`legacy`) or one of
    /// eve's NDJSON generations (`eve-a`, `eve-b`, `eve-27`).
    #[arg(long, value_enum, default_value_t = MissionProtocol::Legacy)]
    mission_protocol: MissionProtocol,
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
        mission_protocol: args.mission_protocol,
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
