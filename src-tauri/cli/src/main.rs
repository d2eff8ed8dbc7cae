//! `casebook`: everything the app does, from a terminal or a script.

mod output;

use casebook_core::citations::{CitationClient, CiteOptions, Input, Mode};
use casebook_core::connection::Connection;
use casebook_core::keys::{ApiKey, KeySource, KeyStore, Service};
use casebook_core::missions::{InvestigationClient, MissionSpec, parse_usd};
use casebook_core::stream::{WatchOptions, WatchUpdate};
use casebook_core::{Error, ErrorCode};
use clap::{Args, Parser, Subcommand};
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "casebook",
    version,
    about = "Cite documents and run missions from the command line"
)]
struct Cli {
    /// The services' base URL (https, or http on loopback).
    #[arg(long, env = "CASEBOOK_BASE_URL", global = true)]
    base_url: Option<String>,
    /// Start a local sandbox for this command and talk to it instead.
    #[arg(long, global = true)]
    sandbox: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Manage API keys in the OS keyring.
    Keys {
        #[command(subcommand)]
        action: KeysAction,
    },
    /// Check that the citation service answers.
    Health,
    /// Show the paragraphs and References the service finds in a document.
    Parse {
        /// A .docx or .pptx, or - to read text from stdin.
        file: String,
        /// Print the service's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Cite a document and save the rewritten copy.
    Cite(CiteArgs),
    /// Start, follow and cancel missions.
    Mission {
        #[command(subcommand)]
        action: MissionAction,
    },
}

#[derive(Subcommand)]
enum KeysAction {
    /// Store a key, read from stdin (or a no-echo prompt on a terminal).
    Set {
        /// citations or investigations
        service: Service,
    },
    /// Say which keys are stored; never prints a key.
    Status,
    /// Remove a stored key.
    Delete {
        /// citations or investigations
        service: Service,
    },
}

#[derive(Args)]
struct CiteArgs {
    /// A .docx or .pptx, or - to read text from stdin.
    file: String,
    #[arg(long, default_value = "every_other")]
    mode: Mode,
    /// Fewest citations per cited paragraph.
    #[arg(long, default_value_t = 1)]
    min: u32,
    /// Most citations per cited paragraph.
    #[arg(long, default_value_t = 2)]
    max: u32,
    /// Seed for random mode, to repeat a result.
    #[arg(long)]
    seed: Option<u64>,
    /// Where to write (default: <stem>.cited.<ext> beside the input; stdout for -).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Replace an existing output file.
    #[arg(long)]
    overwrite: bool,
}

#[derive(Subcommand)]
enum MissionAction {
    /// Start a mission; prints its session id.
    Start {
        #[arg(long)]
        objective: String,
        /// The hard maximum, in US dollars.
        #[arg(long, default_value = "25")]
        budget: String,
        #[arg(long = "type", default_value = "research")]
        mission_type: String,
        #[arg(long, default_value = "fixed")]
        budget_type: String,
        /// Follow the mission's events until it is waiting or complete.
        #[arg(long)]
        follow: bool,
        #[arg(long)]
        json: bool,
    },
    /// Follow a mission's events until it is waiting or complete.
    Watch {
        session_id: String,
        /// One JSON object a line: {"id", "event", "data"}.
        #[arg(long)]
        json: bool,
        /// Resume after this event id.
        #[arg(long)]
        last_event_id: Option<String>,
    },
    /// Cancel the mission's active turn.
    Cancel { session_id: String },
}

/// Exit codes scripts can rely on.
fn exit_code(err: &Error) -> u8 {
    match err.code {
        ErrorCode::Unauthorized => 3,
        ErrorCode::RateLimited => 4,
        ErrorCode::InvalidInput
        | ErrorCode::TooLarge
        | ErrorCode::EmptyFile
        | ErrorCode::NotADocument
        | ErrorCode::LegacyFormat
        | ErrorCode::EncryptedDocument
        | ErrorCode::MacroEnabled
        | ErrorCode::TemplateOrShow
        | ErrorCode::UnsupportedDocument
        | ErrorCode::CorruptDocument
        | ErrorCode::UnsafeDocument => 5,
        ErrorCode::Network | ErrorCode::Timeout => 6,
        _ => 1,
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("casebook: {} [{}]", err.message, err.code);
            ExitCode::from(exit_code(&err))
        }
    }
}

/// The service to talk to: a sandbox started for this command, or a base URL.
struct Backend {
    conn: Connection,
    sandbox: Option<casebook_sandbox::RunningSandbox>,
}

impl Backend {
    async fn new(base_url: Option<String>, sandbox: bool) -> Result<Self, Error> {
        if sandbox {
            // CASEBOOK_SANDBOX_PACE=instant: missions without pauses (scripts and tests).
            let pace = match std::env::var("CASEBOOK_SANDBOX_PACE").as_deref() {
                Ok("instant") => casebook_sandbox::Pace::Instant,
                _ => casebook_sandbox::Pace::Realistic,
            };
            let running = casebook_sandbox::start(casebook_sandbox::SandboxConfig {
                pace,
                ..Default::default()
            })
            .await
            .map_err(|e| Error::new(ErrorCode::Io, format!("Cannot start the sandbox: {e}")))?;
            return Ok(Self {
                conn: Connection::new(running.base_url())?,
                sandbox: Some(running),
            });
        }
        match base_url {
            Some(url) => Ok(Self {
                conn: Connection::new(&url)?,
                sandbox: None,
            }),
            None => Err(Error::invalid_input(
                "No service to talk to: pass --base-url URL (or set CASEBOOK_BASE_URL), or --sandbox.",
            )),
        }
    }

    /// The sandbox's own key, or the stored one for `service`.
    async fn key(&self, service: Service) -> Result<ApiKey, Error> {
        if let Some(s) = &self.sandbox {
            return ApiKey::parse(s.key());
        }
        KeyStore::new().get(service).await?.ok_or_else(|| {
            Error::new(
                ErrorCode::Unauthorized,
                format!(
                    "No {} key: store one with `casebook keys set {}` or set {}.",
                    service.as_str(),
                    service.as_str(),
                    service.env_var()
                ),
            )
        })
    }

    async fn citations(&self) -> Result<CitationClient, Error> {
        Ok(CitationClient::new(
            self.conn.clone(),
            self.key(Service::Citations).await?,
        ))
    }

    async fn investigations(&self) -> Result<InvestigationClient, Error> {
        Ok(InvestigationClient::new(
            self.conn.clone(),
            self.key(Service::Investigations).await?,
        ))
    }
}

async fn run(cli: Cli) -> Result<(), Error> {
    if let Command::Keys { action } = cli.command {
        return keys(action).await;
    }
    let backend = Backend::new(cli.base_url, cli.sandbox).await?;
    match cli.command {
        Command::Keys { .. } => unreachable!("handled above"),
        Command::Health => {
            let health = backend.conn.health().await?;
            println!(
                "{}: {}",
                backend.conn.base_url(),
                health.status.as_deref().unwrap_or("answering")
            );
            Ok(())
        }
        Command::Parse { file, json } => {
            let source = Source::read(&file)?;
            let client = backend.citations().await?;
            let progress = output::progress(format!("Reading {}", source.label()));
            let parsed = client.parse(&source.input()?, &progress).await?;
            output::done(&progress);
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&parsed).unwrap_or_default()
                );
            } else {
                output::print_parsed(&parsed);
            }
            Ok(())
        }
        Command::Cite(args) => cite(&backend, args).await,
        Command::Mission { action } => mission(&backend, action).await,
    }
}

/// What `parse` and `cite` read: a file, or text from stdin.
struct Source {
    path: Option<PathBuf>,
    bytes: Vec<u8>,
}

impl Source {
    fn read(arg: &str) -> Result<Self, Error> {
        if arg == "-" {
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .take(casebook_core::documents::MAX_REQUEST_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io("Cannot read stdin", &e))?;
            return Ok(Self { path: None, bytes });
        }
        let path = PathBuf::from(arg);
        let meta =
            std::fs::metadata(&path).map_err(|e| Error::io(&format!("Cannot read {arg}"), &e))?;
        if meta.is_dir() {
            return Err(Error::invalid_input(format!(
                "{arg} is a folder, not a document."
            )));
        }
        if meta.len() > casebook_core::documents::MAX_DOCUMENT_BYTES {
            return Err(casebook_core::documents::too_large(meta.len()));
        }
        let bytes =
            std::fs::read(&path).map_err(|e| Error::io(&format!("Cannot read {arg}"), &e))?;
        Ok(Self {
            path: Some(path),
            bytes,
        })
    }

    fn label(&self) -> String {
        self.path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "stdin".into())
    }

    fn input(&self) -> Result<Input<'_>, Error> {
        match &self.path {
            Some(_) => Input::document(&self.bytes),
            None => {
                let text = std::str::from_utf8(&self.bytes)
                    .map_err(|_| Error::invalid_input("The text on stdin is not UTF-8."))?;
                Input::essay(text)
            }
        }
    }
}

async fn cite(backend: &Backend, args: CiteArgs) -> Result<(), Error> {
    let options = CiteOptions {
        mode: args.mode,
        min_citations: args.min,
        max_citations: args.max,
        seed: args.seed,
    };
    options.validate()?;
    let source = Source::read(&args.file)?;
    let input = source.input()?;
    let out = match (&args.output, &source.path) {
        (Some(o), _) => Some(o.clone()),
        (None, Some(p)) => Some(casebook_core::save::cited_path(p)),
        (None, None) => None,
    };
    if let Some(out) = &out {
        casebook_core::save::check_destination(source.path.as_deref(), out, args.overwrite)?;
    }
    let client = backend.citations().await?;
    let progress = output::progress(format!("Citing {}", source.label()));
    let cited = client.cite(&input, &options, &progress).await?;
    output::done(&progress);
    match out {
        Some(out) => {
            casebook_core::save::write_atomic(&out, &cited.bytes, args.overwrite)?;
            eprintln!("Saved {}", out.display());
        }
        None => std::io::stdout()
            .write_all(&cited.bytes)
            .map_err(|e| Error::io("Cannot write stdout", &e))?,
    }
    Ok(())
}

async fn mission(backend: &Backend, action: MissionAction) -> Result<(), Error> {
    let client = backend.investigations().await?;
    match action {
        MissionAction::Start {
            objective,
            budget,
            mission_type,
            budget_type,
            follow,
            json,
        } => {
            let spec = MissionSpec {
                mission_type,
                budget_type,
                budget_cents: parse_usd(&budget)?,
                objective,
            };
            let session = client.create_session(&spec).await?;
            if json {
                println!(
                    "{}",
                    serde_json::json!({"sessionId": session.session_id, "continuationToken": session.continuation_token})
                );
            } else {
                println!("{}", session.session_id);
            }
            std::io::stdout().flush().ok();
            if follow {
                watch(&client, &session.session_id, None, json).await?;
            }
            Ok(())
        }
        MissionAction::Watch {
            session_id,
            json,
            last_event_id,
        } => watch(&client, &session_id, last_event_id, json).await,
        MissionAction::Cancel { session_id } => {
            let ack = client.cancel(&session_id).await?;
            println!("{} {}", ack.session_id, ack.status);
            Ok(())
        }
    }
}

async fn watch(
    client: &InvestigationClient,
    session_id: &str,
    last: Option<String>,
    json: bool,
) -> Result<(), Error> {
    let tty = std::io::stderr().is_terminal();
    let end = client
        .watch(session_id, WatchOptions { last_event_id: last, ..Default::default() }, |update| match update {
            WatchUpdate::Event { event } => {
                let mut out = std::io::stdout().lock();
                let line = if json {
                    serde_json::json!({"id": event.id, "event": event.event, "data": event.data}).to_string()
                } else {
                    output::event_line(&event)
                };
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
            WatchUpdate::Reconnecting { after_ms, reason, .. } if tty => {
                eprintln!("(stream dropped: {reason}; reconnecting in {:.1} s)", after_ms as f64 / 1000.0);
            }
            _ => {}
        })
        .await?;
    if tty {
        eprintln!("Mission {}: {}", session_id, end.terminal.event);
    }
    Ok(())
}

async fn keys(action: KeysAction) -> Result<(), Error> {
    let store = KeyStore::new();
    match action {
        KeysAction::Set { service } => {
            let key = read_secret(&format!("API key for {}: ", service.as_str()))?;
            store.set(service, &key).await?;
            eprintln!("Stored the {} key in the keyring.", service.as_str());
        }
        KeysAction::Status => {
            // One line per service, even when the keyring cannot answer for one of them.
            let mut failure = None;
            for service in Service::ALL {
                match store.status(service).await {
                    Ok(status) => {
                        let source = match status.source {
                            KeySource::Keyring => "keyring",
                            KeySource::Environment => service.env_var(),
                            KeySource::None => "not set",
                        };
                        match status.masked {
                            Some(masked) => {
                                println!("{:<15} {masked} ({source})", service.as_str())
                            }
                            None => println!("{:<15} {source}", service.as_str()),
                        }
                    }
                    Err(e) => {
                        println!("{:<15} unknown ({})", service.as_str(), e.code);
                        failure = Some(e);
                    }
                }
            }
            if let Some(e) = failure {
                return Err(e);
            }
        }
        KeysAction::Delete { service } => {
            if store.delete(service).await? {
                eprintln!("Deleted the {} key.", service.as_str());
            } else {
                eprintln!("No {} key was stored.", service.as_str());
            }
        }
    }
    Ok(())
}

/// A key from stdin, or typed at a prompt that does not echo it.
fn read_secret(prompt: &str) -> Result<String, Error> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return rpassword::prompt_password(prompt)
            .map_err(|e| Error::io("Cannot read the key", &e));
    }
    let mut buf = String::new();
    stdin
        .lock()
        .take(64 * 1024)
        .read_to_string(&mut buf)
        .map_err(|e| Error::io("Cannot read the key from stdin", &e))?;
    Ok(buf)
}
