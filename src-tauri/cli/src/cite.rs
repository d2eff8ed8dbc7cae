//! `casebook cite`: a document or pasted text cited, saved beside it and summarised.

use crate::{output, to_stdout};
use casebook_core::citations::client::{CitationClient, CiteOptions, Mode, ValidOptions};
use casebook_core::citations::jobs::{self, CiteSource};
use casebook_core::citations::preview;
use casebook_core::citations::summary;
use casebook_core::{Error, ErrorCode, save};
use clap::{Args, Parser};
use std::io::Read;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub(crate) struct CiteArgs {
    /// A .docx or .pptx, or - to read text from stdin.
    pub(crate) file: PathBuf,
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
    /// Print what changed as JSON.
    #[arg(long)]
    json: bool,
}

impl CiteArgs {
    /// `casebook cite FILE`, every option at its default.
    pub(crate) fn defaults_for(file: &Path) -> Self {
        #[derive(Parser)]
        struct Cite {
            #[command(flatten)]
            args: CiteArgs,
        }
        Cite::parse_from([std::ffi::OsStr::new("cite"), file.as_os_str()]).args
    }

    fn options(&self) -> Result<ValidOptions, Error> {
        CiteOptions {
            mode: self.mode,
            min_citations: self.min,
            max_citations: self.max,
            seed: self.seed,
        }
        .validated()
    }
}

fn is_stdin(file: &Path) -> bool {
    file == Path::new("-")
}

fn label(file: &Path) -> String {
    if is_stdin(file) {
        "stdin".into()
    } else {
        file.display().to_string()
    }
}

/// A file path, or text read from stdin for `-` (bounded like a document).
pub(crate) fn source(file: &Path) -> Result<CiteSource, Error> {
    if !is_stdin(file) {
        return Ok(CiteSource::Document {
            path: file.to_owned(),
        });
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(casebook_core::citations::documents::MAX_REQUEST_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("Cannot read stdin", &e))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::invalid_input("The text on stdin is not UTF-8."))?;
    Ok(CiteSource::Essay { text })
}

/// `client` is awaited only once the input and output are found good.
pub(crate) async fn cite(
    client: impl Future<Output = Result<CitationClient, Error>>,
    args: CiteArgs,
) -> Result<(), Error> {
    let options = args.options()?;
    let input = (!is_stdin(&args.file)).then(|| args.file.clone());
    let out = match (&args.output, &input) {
        (Some(o), _) => Some(o.clone()),
        (None, Some(p)) => Some(save::cited_path(p)),
        (None, None) => None,
    };
    if let Some(out) = &out {
        save::check_destination(input.as_deref(), out, args.overwrite)?;
    }
    let source = source(&args.file)?;
    if let Some(note) = references_note(&source).await {
        eprintln!("{note}");
    }
    let client = client.await?;
    let progress = output::progress(format!("Citing {}", label(&args.file)));
    // The answer is decoded straight into the file that becomes the output.
    let pending = out.as_deref().map(save::Pending::create).transpose()?;
    let file = match &pending {
        Some(p) => p
            .file()
            .try_clone()
            .map_err(|e| Error::io("Cannot write the output", &e))?,
        None => jobs::temporary_output().await?,
    };
    // Ctrl+C (SIGINT) while sending, waiting or receiving: the request is dropped with
    // the unnamed file its answer was going into, and the pending output with it, so
    // nothing is left behind; the command says so and exits 130.
    let result = tokio::select! {
        r = jobs::cite_source(&client, &source, &options, &progress, file) => r,
        _ = tokio::signal::ctrl_c() => Err(Error::new(
            ErrorCode::Cancelled,
            "Cancelled: nothing was saved.",
        )),
    };
    // The progress line goes first, so that an error starts a line of its own.
    output::done(&progress);
    let cited = result?;
    match pending {
        Some(p) => p.commit(args.overwrite)?,
        None => to_stdout(false, |mut w| cited.write_to(&mut w))?,
    }
    output::print_cited(&cited, out.as_deref(), args.json);
    Ok(())
}

/// What Casebook's own reading finds before anything is sent, as the window's card
/// says it: no References section, which a service may refuse or answer by adding one.
async fn references_note(source: &CiteSource) -> Option<String> {
    let none = match source {
        CiteSource::Document { path } => preview::inspect_documents(vec![path.clone()])
            .await
            .first()
            .is_some_and(|info| info.references == Some(0)),
        CiteSource::Essay { text } => summary::read_essay(text).references.is_empty(),
    };
    none.then(|| output::no_references(matches!(source, CiteSource::Essay { .. })))
}
