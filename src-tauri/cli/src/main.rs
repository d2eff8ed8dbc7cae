//! `casebook`: everything the app does, from a terminal or a script.

use casebook_core::connection::Connection;
use casebook_core::keys::{KeySource, KeyStore, Service};
use casebook_core::{Error, ErrorCode};
use clap::{Parser, Subcommand};
use std::io::{IsTerminal, Read};
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
    /// Start a local sandbox and talk to it instead.
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
        | ErrorCode::CorruptDocument => 5,
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

async fn run(cli: Cli) -> Result<(), Error> {
    match cli.command {
        Command::Keys { action } => keys(action).await,
        Command::Health => {
            let (_sandbox, base_url) = backend(cli.base_url, cli.sandbox).await?;
            let health = Connection::new(&base_url)?.health().await?;
            println!(
                "{}: {}",
                base_url,
                health.status.as_deref().unwrap_or("answering")
            );
            Ok(())
        }
    }
}

/// The base URL to use, starting an in-process sandbox when asked to.
async fn backend(
    base_url: Option<String>,
    sandbox: bool,
) -> Result<(Option<casebook_sandbox::RunningSandbox>, String), Error> {
    if sandbox {
        let running = casebook_sandbox::start(Default::default())
            .await
            .map_err(|e| Error::new(ErrorCode::Io, format!("Cannot start the sandbox: {e}")))?;
        let url = running.base_url().to_owned();
        return Ok((Some(running), url));
    }
    match base_url {
        Some(url) => Ok((None, url)),
        None => Err(Error::invalid_input(
            "No service to talk to: pass --base-url URL (or set CASEBOOK_BASE_URL), or --sandbox.",
        )),
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
            for service in Service::ALL {
                let status = store.status(service).await?;
                let where_ = match status.source {
                    KeySource::Keyring => "keyring",
                    KeySource::Environment => service.env_var(),
                    KeySource::None => "not set",
                };
                match status.masked {
                    Some(masked) => println!("{:<15} {masked} ({where_})", service.as_str()),
                    None => println!("{:<15} {where_}", service.as_str()),
                }
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
        return rpassword_prompt(prompt);
    }
    let mut buf = String::new();
    stdin
        .lock()
        .take(64 * 1024)
        .read_to_string(&mut buf)
        .map_err(|e| Error::io("Cannot read the key from stdin", &e))?;
    Ok(buf)
}

fn rpassword_prompt(prompt: &str) -> Result<String, Error> {
    rpassword::prompt_password(prompt).map_err(|e| Error::io("Cannot read the key", &e))
}
