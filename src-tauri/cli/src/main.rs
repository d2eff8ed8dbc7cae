//! `casebook`: everything the app does, from a terminal or a script. An adapter
//! over `casebook-core`, like the app: it shares the app's mission history.

// A function longer than clippy.toml's 150 lines is split (`make lint`); tests are
// exempt: a scenario reads top to bottom.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

mod assets;
mod cite;
mod cite_many;
mod output;
mod terminal;

use casebook_core::app::{BackendChoice, Casebook, Config};
use casebook_core::backend::{Backend, SandboxOptions};
use casebook_core::citations::preview;
use casebook_core::keys::{KeySource, KeyStore, Service};
use casebook_core::missions::client::attachment::Attachment;
use casebook_core::missions::client::{FollowUp, InputResponse, MissionSpec};
use casebook_core::missions::export::transcript::ExportFormat;
use casebook_core::missions::follower::{Feed, MissionUpdate, Quiet};
use casebook_core::missions::spend::parse_usd;
use casebook_core::missions::store::MissionStatus;
use casebook_core::{Error, ErrorCode, save};
use cite::{CiteArgs, cite, source};
use clap::{Parser, Subcommand};
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use terminal::{say, tell};

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
    /// The investigation service's API base under the base URL: /eve/v1 (eve's single
    /// agent, the default), /eve/<agent>/v1, or /eve/agents/<agent>/eve/v1 (older releases).
    /// A mission keeps the base it was started on.
    #[arg(long, env = "CASEBOOK_EVE_BASE", global = true)]
    eve_base: Option<String>,
    /// Start a local sandbox for this command and talk to it instead.
    #[arg(long, global = true)]
    sandbox: bool,
    /// The sandbox's missions: realistic pauses, or none (scripts).
    #[arg(
        long,
        env = "CASEBOOK_SANDBOX_PACE",
        global = true,
        value_enum,
        default_value = "realistic"
    )]
    sandbox_pace: casebook_sandbox::Pace,
    /// The data folder shared with the app (mission history).
    #[arg(long, env = "CASEBOOK_DATA_DIR", global = true)]
    data_dir: Option<PathBuf>,
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
        file: PathBuf,
        /// Print the service's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Cite a document, save the rewritten copy and say what changed.
    Cite(CiteArgs),
    /// Who you are signed in as at the citation service, its usage counters and keys.
    /// The session comes from the app's sign-in (the keyring) or CASEBOOK_SESSION_COOKIE.
    Account {
        /// Print the account as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The investigation service's agent at the API base: its name and model, from eve's
    /// info route (older servers have none).
    Agent {
        #[arg(long)]
        json: bool,
    },
    /// Start, follow, list, export and cancel missions.
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
    /// Follow a mission: what is stored, then its events until it is waiting or complete.
    Watch {
        session_id: String,
        /// One JSON object a line: {"id", "event", "data"}.
        #[arg(long)]
        json: bool,
        /// For a mission not in this computer's history: resume after this event id.
        #[arg(long)]
        last_event_id: Option<String>,
    },
    /// The missions in this computer's history, newest first.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Search every mission in this computer's history: objectives, messages, steps,
    /// sources' titles and addresses, reports. The best hits first, each with its
    /// mission's session id and the item it is at (`mission show` numbers them).
    Search {
        /// What to find (inside conversations, three characters or more).
        query: String,
        /// The most hits.
        #[arg(long, default_value_t = 20)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// Write a mission's transcript (`md`, `json`) or its report alone (`report`, or
    /// `docx`: a Word document with the sources as References).
    Export {
        session_id: String,
        #[arg(long, default_value = "md")]
        format: ExportFormat,
        /// Where to write (default: stdout).
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
        /// Then cite the Word document as `casebook cite` does, writing the cited copy
        /// beside it (<stem>.cited.docx). Needs --format docx and -o.
        #[arg(long, requires = "output")]
        cite: bool,
    },
    /// Cancel the mission's active turn (exit 0 also when there is nothing to cancel).
    Cancel { session_id: String },
    /// Send a waiting mission your next message; its new turn streams into the same mission.
    Reply {
        session_id: String,
        #[arg(long, required_unless_present = "attach")]
        message: Option<String>,
        /// A document to attach (PDF, Word, PowerPoint, text, Markdown, an image…; at
        /// most 12 MB in all). Repeat it for more than one.
        #[arg(long, value_name = "PATH")]
        attach: Vec<std::path::PathBuf>,
        /// Follow the turn it starts until the mission waits or is complete.
        #[arg(long)]
        follow: bool,
        #[arg(long)]
        json: bool,
    },
    /// Answer a question the mission asked, with one of its options or free text.
    Answer {
        session_id: String,
        /// The request's id (`mission show` lists what is pending).
        #[arg(long = "request")]
        request_id: String,
        #[arg(
            long = "option",
            conflicts_with = "text",
            required_unless_present = "text"
        )]
        option_id: Option<String>,
        #[arg(long)]
        text: Option<String>,
        #[arg(long)]
        follow: bool,
        #[arg(long)]
        json: bool,
    },
    /// The mission as a conversation: its status, what it asks, and its messages.
    Show {
        session_id: String,
        /// Instead, a sub-agent it delegated to, by the call id (or session id) its step
        /// names: its own conversation, its stream read now (only now), on from where the
        /// last `--agent` stopped; without a service, what was read before.
        #[arg(long, value_name = "CALL_ID")]
        agent: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

/// Exit codes scripts can rely on.
fn exit_code(err: &Error) -> u8 {
    if err.is_unauthorized() {
        3
    } else if err.is_rate_limited() {
        4
    } else if err.is_bad_document() || err.code() == ErrorCode::InvalidInput {
        5
    } else if err.is_network() {
        6
    } else if err.code() == ErrorCode::Cancelled {
        // Interrupted (Ctrl+C), as shells report a command SIGINT ended.
        130
    } else {
        1
    }
}

fn main() -> ExitCode {
    // Packaging: `casebook __package-assets DIR` writes the manual pages and completions.
    if let Some(code) = assets::run_if_asked() {
        return code;
    }
    // One malloc arena: a command does one thing at a time, and every thread with its
    // own arena keeps its own high-water mark of the chunks a cite streams through.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: before any other thread exists; mallopt only sets a limit.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let cli = Cli::parse();
    // One thread drives the requests; file work goes to tokio's blocking threads.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("casebook: cannot start: {e} [internal]");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // The message may carry the service's own words.
            tell!("casebook: {} [{}]", err.message(), err.code());
            ExitCode::from(exit_code(&err))
        }
    }
}

/// The service named on the command line; `None` when none is.
async fn backend(cli: &Cli) -> Result<Option<Backend>, Error> {
    if cli.sandbox {
        let options = SandboxOptions {
            pace: cli.sandbox_pace,
            ..SandboxOptions::default()
        };
        let eve_base = cli.eve_base.as_deref().unwrap_or("");
        casebook_core::missions::client::agent::parse_api_base(eve_base)?;
        let b = Backend::sandbox(None, options).await?;
        return b.with_eve_base(eve_base).map(Some);
    }
    cli.base_url
        .as_deref()
        .map(|url| Backend::remote(url)?.with_eve_base(cli.eve_base.as_deref().unwrap_or("")))
        .transpose()
}

async fn run(cli: Cli) -> Result<(), Error> {
    let backend = match &cli.command {
        Command::Keys { .. } => None,
        _ => backend(&cli).await?,
    };
    let data_dir = match cli.data_dir.clone() {
        Some(d) => d,
        None if matches!(cli.command, Command::Mission { .. }) => casebook_core::paths::data_dir()?,
        // Commands that keep no history need no data folder.
        None => std::env::temp_dir(),
    };
    let needs_store = matches!(cli.command, Command::Mission { .. });
    let core = if needs_store {
        let config = Config {
            data_dir,
            backend: BackendChoice::Fixed(backend.map(Box::new)),
            sandbox: SandboxOptions::default(),
            test_hooks: false,
        };
        Core {
            casebook: Some(Casebook::start(config, Arc::new(Quiet)).await?),
            backend: None,
        }
    } else {
        Core {
            casebook: None,
            backend,
        }
    };
    let result = dispatch(cli.command, &core).await;
    core.shutdown().await;
    result
}

/// Mission commands use the shared history (which holds the backend); the others
/// only a service.
struct Core {
    casebook: Option<Arc<Casebook>>,
    backend: Option<Backend>,
}

impl Core {
    fn backend(&self) -> Result<&Backend, Error> {
        self.backend.as_ref().ok_or_else(|| {
            Error::invalid_input(
                "No service to talk to: pass --base-url URL (or set CASEBOOK_BASE_URL), or --sandbox.",
            )
        })
    }

    fn casebook(&self) -> &Arc<Casebook> {
        self.casebook
            .as_ref()
            .expect("mission commands start the full core")
    }

    async fn shutdown(self) {
        if let Some(c) = self.casebook {
            c.shutdown().await;
        }
        if let Some(b) = self.backend {
            b.stop().await;
        }
    }
}

async fn dispatch(command: Command, core: &Core) -> Result<(), Error> {
    match command {
        Command::Keys { action } => keys(action).await,
        Command::Health => {
            let b = core.backend()?;
            let health = b.connection().health().await?;
            say!(
                "{}: {}",
                b.base_url(),
                health.status.as_deref().unwrap_or("answering")
            );
            Ok(())
        }
        Command::Parse { file, json } => {
            let client = core.backend()?.citations().await?;
            let source = source(&file)?;
            output::print_preview(&preview::preview_with(&client, &source).await?, json);
            Ok(())
        }
        Command::Cite(args) if args.is_many() => {
            cite_many::cite_many(core.backend()?.citations(), args).await
        }
        Command::Cite(args) => cite(core.backend()?.citations(), args).await,
        Command::Account { json } => {
            let view = casebook_core::account::view(core.backend()?.connection(), &KeyStore::new())
                .await?;
            output::print_account(view, json)
        }
        Command::Agent { json } => {
            let client = core.backend()?.investigations().await?;
            let info = client.agent_info().await?;
            output::print_agent(client.api_base(), info.as_ref(), json);
            Ok(())
        }
        Command::Mission { action } => mission(core.casebook(), action).await,
    }
}

async fn mission(core: &Arc<Casebook>, action: MissionAction) -> Result<(), Error> {
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
            let record = core.start_mission(&spec).await?;
            if json {
                println!(
                    "{}",
                    output::json_line(&serde_json::json!({"sessionId": record.session_id}))
                );
            } else {
                say!("{}", record.session_id);
            }
            std::io::stdout().flush().ok();
            if follow {
                watch(core, &record.session_id, json).await?;
            }
            Ok(())
        }
        MissionAction::Watch {
            session_id,
            json,
            last_event_id,
        } => {
            core.adopt_mission(&session_id, last_event_id).await?;
            watch(core, &session_id, json).await
        }
        MissionAction::List { json } => {
            output::print_missions(&core.list_missions().await?, json);
            Ok(())
        }
        MissionAction::Search { query, limit, json } => {
            output::print_mission_hits(&core.search_missions(&query, limit).await?, json);
            Ok(())
        }
        MissionAction::Export {
            session_id,
            format,
            output,
            cite: then_cite,
        } => {
            let cite_args = match (then_cite, format, &output) {
                (true, ExportFormat::Docx, Some(path)) => Some(CiteArgs::defaults_for(path)),
                (true, ..) => return Err(Error::invalid_input("--cite needs --format docx.")),
                (false, ..) => None,
            };
            if let Some(args) = &cite_args {
                // Refused before anything is written, so no half of the pair is left.
                save::check_destination(Some(args.file()), &save::cited_path(args.file()), false)?;
            }
            let (_, bytes) = core.export_mission(&session_id, format).await?;
            match output {
                Some(path) => {
                    save::check_destination(None, &path, false)?;
                    save::write_atomic(&path, &bytes, false)?;
                    tell!("Saved {}", path.display());
                    match cite_args {
                        Some(args) => cite(core.citations(), args).await,
                        None => Ok(()),
                    }
                }
                None => to_stdout(format == ExportFormat::Json, |w| w.write_all(&bytes)),
            }
        }
        MissionAction::Cancel { session_id } => {
            core.adopt_mission(&session_id, None).await?;
            let ack = core.cancel_mission(&session_id).await?;
            say!("{session_id} {}", ack.said());
            Ok(())
        }
        MissionAction::Reply {
            session_id,
            message,
            attach,
            follow,
            json,
        } => {
            // Every file is read (and bounded) before anything is sent.
            let files = attach
                .iter()
                .map(|p| Attachment::read(p))
                .collect::<Result<Vec<_>, _>>()?;
            let message = message.unwrap_or_default();
            let follow_up = if files.is_empty() {
                FollowUp::Message(message)
            } else {
                FollowUp::Attached(message, files)
            };
            core.adopt_mission(&session_id, None).await?;
            let sent = core.follow_up_mission(&session_id, &follow_up).await?;
            output::print_delivered(&session_id, &sent, json);
            if follow {
                watch(core, &session_id, json).await?;
            }
            Ok(())
        }
        MissionAction::Answer {
            session_id,
            request_id,
            option_id,
            text,
            follow,
            json,
        } => {
            core.adopt_mission(&session_id, None).await?;
            let answer = InputResponse {
                request_id,
                option_id,
                text,
            };
            let sent = core
                .follow_up_mission(&session_id, &FollowUp::Answers(vec![answer]))
                .await?;
            output::print_delivered(&session_id, &sent, json);
            if follow {
                watch(core, &session_id, json).await?;
            }
            Ok(())
        }
        MissionAction::Show {
            session_id,
            agent: Some(which),
            json,
        } => {
            let sub = core.open_subagent(&session_id, &which).await?;
            output::print_subagent(&session_id, &sub, json);
            Ok(())
        }
        MissionAction::Show {
            session_id, json, ..
        } => {
            let record = core.mission(&session_id).await?;
            let conversation = core.mission_conversation(&session_id).await?;
            output::print_conversation(&record, &conversation, json);
            Ok(())
        }
    }
}

/// How following ended, when it failed: the error's code and words.
type Ending = Arc<Mutex<Option<(Option<ErrorCode>, Option<String>)>>>;

/// Prints the mission's events (stored, then live) until nobody follows it any
/// more; fails when following ended in an error.
async fn watch(core: &Arc<Casebook>, session_id: &str, json: bool) -> Result<(), Error> {
    let tty = std::io::stderr().is_terminal();
    let ended: Ending = Default::default();
    let last = ended.clone();
    let sink = Box::new(move |update: MissionUpdate| {
        match update {
            // The CLI prints the records; `mission show` prints the conversation.
            MissionUpdate::Mission { .. }
            | MissionUpdate::Conversation { .. }
            | MissionUpdate::Items { .. } => {}
            MissionUpdate::Events { events, .. } => output::print_events(&events, json),
            MissionUpdate::Status { detail, code, .. } => {
                if tty && let Some(d) = &detail {
                    tell!("({d})");
                }
                *last.lock().unwrap_or_else(|p| p.into_inner()) = Some((code, detail));
            }
        }
        true
    });
    // Asked from the stored cursor even when stored as waiting: another client may
    // have replied, and this follows the turn that started.
    let stored = core.mission(session_id).await?.status;
    if !core.has_service().await
        && matches!(stored, MissionStatus::Waiting | MissionStatus::NeedsInput)
    {
        tell!(
            "(No service to ask for anything newer: this is what is stored. Pass --base-url URL or --sandbox to ask.)"
        );
    }
    core.watch_asking(session_id, "cli", sink, Feed::EVERYTHING)
        .await?;
    core.watch_finished(session_id).await;
    let record = core.mission(session_id).await?;
    if tty {
        tell!("Mission {}: {}", session_id, record.status.as_str());
    }
    let (code, detail) = ended
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .unwrap_or_default();
    let detail = detail
        .or_else(|| record.status.explain().map(str::to_owned))
        .unwrap_or_else(|| "The mission could not be followed.".into());
    match record.status {
        MissionStatus::Lost => Err(Error::new(ErrorCode::Network, detail)),
        MissionStatus::Expired => Err(Error::new(ErrorCode::NotFound, detail)
            .with_status(410)
            .with_service_code("session_expired")),
        MissionStatus::Error => Err(Error::new(code.unwrap_or(ErrorCode::Internal), detail)),
        // Following itself failed (a stranded session): not a session that ended failed.
        MissionStatus::Failed if code.is_some() => {
            Err(Error::new(code.unwrap_or(ErrorCode::Internal), detail))
        }
        _ => Ok(()),
    }
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
                                say!("{:<15} {masked} ({source})", service.as_str())
                            }
                            None => println!("{:<15} {source}", service.as_str()),
                        }
                    }
                    Err(e) => {
                        println!("{:<15} unknown ({})", service.as_str(), e.code());
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

/// Text the CLI passes through to stdout (a cited essay, a transcript): exact on a
/// pipe or into a file, made safe on a terminal, where a person reads it (JSON as
/// the same JSON, with what a terminal obeys escaped).
pub(crate) fn to_stdout(
    json: bool,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), Error> {
    let stdout = std::io::stdout();
    let result = if stdout.is_terminal() && json {
        let mut text = Vec::new();
        write(&mut text).and_then(|()| {
            let text = terminal::json(String::from_utf8_lossy(&text).into_owned());
            let mut w = stdout.lock();
            w.write_all(text.as_bytes()).and_then(|()| w.flush())
        })
    } else if stdout.is_terminal() {
        let mut w = terminal::SafeWriter::new(stdout.lock());
        write(&mut w).and_then(|()| w.flush())
    } else {
        let mut w = stdout.lock();
        write(&mut w).and_then(|()| w.flush())
    };
    result.map_err(|e| Error::io("Cannot write stdout", &e))
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
