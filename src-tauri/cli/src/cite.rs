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
    /// .docx and .pptx files, folders (their .docx and .pptx), or - alone to read text
    /// from stdin.
    #[arg(required = true, value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
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
    pub(crate) output: Option<PathBuf>,
    /// Replace an existing output file.
    #[arg(long)]
    pub(crate) overwrite: bool,
    /// Print what changed as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Save a Word document for review in Word: each citation, and each paragraph added
    /// to the References, a tracked change by "Casebook" (default name <stem>.review.docx).
    /// PowerPoint has none: a deck is saved cited, with --review-list to stand in.
    #[arg(long)]
    track_changes: bool,
    /// Also save the inserted citations as a list: CSV for a .csv name, else Markdown.
    /// Citing several documents, a folder: each list goes there as <stem>.citations.md.
    #[arg(long, value_name = "FILE")]
    pub(crate) review_list: Option<PathBuf>,
    /// How many documents are cited at once, citing several.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=8))]
    pub(crate) jobs: u16,
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

    /// The one file a single cite names.
    pub(crate) fn file(&self) -> &Path {
        &self.files[0]
    }

    /// Several documents, or a folder of them: cited as a queue (`cite_many`).
    pub(crate) fn is_many(&self) -> bool {
        self.files.len() > 1 || self.files[0].is_dir()
    }

    /// Where a single cite's document goes when `-o` does not say.
    fn default_output(&self, input: &Path) -> PathBuf {
        if self.reviews(input) {
            save::review_path(input)
        } else {
            save::cited_path(input)
        }
    }

    /// Whether `input` gets a review copy: asked for, and a Word document.
    pub(crate) fn reviews(&self, input: &Path) -> bool {
        self.track_changes
            && input
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("docx"))
    }

    pub(crate) fn options(&self) -> Result<ValidOptions, Error> {
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
    let file = args.file().to_owned();
    let input = (!is_stdin(&file)).then(|| file.clone());
    let out = match (&args.output, &input) {
        (Some(o), _) => Some(o.clone()),
        (None, Some(p)) => Some(args.default_output(p)),
        (None, None) => None,
    };
    if let Some(out) = &out {
        save::check_destination(input.as_deref(), out, args.overwrite)?;
    }
    if let Some(list) = &args.review_list {
        save::check_destination(input.as_deref(), list, args.overwrite)?;
    }
    let review = input.as_deref().is_some_and(|p| args.reviews(p));
    if args.track_changes && !review {
        eprintln!("{}", output::no_tracked_changes(input.is_none()));
    }
    let source = source(&file)?;
    if let Some(note) = references_note(&source).await {
        eprintln!("{note}");
    }
    let client = client.await?;
    let progress = output::progress(format!("Citing {}", label(&file)));
    // The answer is decoded straight into the file that becomes the output (a review
    // copy is built from it into the output instead).
    let pending = (out.as_deref().filter(|_| !review))
        .map(save::Pending::create)
        .transpose()?;
    let into = match &pending {
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
        r = jobs::cite_source(&client, &source, &options, &progress, into) => r,
        _ = tokio::signal::ctrl_c() => Err(Error::new(
            ErrorCode::Cancelled,
            "Cancelled: nothing was saved.",
        )),
    };
    // The progress line goes first, so that an error starts a line of its own.
    output::done(&progress);
    let cited = result?;
    let copy = match (pending, &out) {
        (Some(p), _) => {
            p.commit(args.overwrite)?;
            None
        }
        (None, Some(out)) => Some(cited.save_review(out, args.overwrite)?),
        (None, None) => {
            to_stdout(false, |mut w| cited.write_to(&mut w))?;
            None
        }
    };
    if let Some(list) = &args.review_list {
        cited.save_review_list(list, args.overwrite)?;
    }
    let saved = output::Saved {
        output: out.as_deref(),
        review: copy.as_ref(),
        list: args.review_list.as_deref(),
    };
    output::print_cited(&cited, &saved, args.json);
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
