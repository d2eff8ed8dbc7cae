//! `casebook cite A.docx B.pptx DIR/ …`: many documents as one queue (core's
//! [`batch`]), a line for each as it finishes, a table at the end, and an exit code that
//! says whether every one was cited and saved.

use crate::cite::CiteArgs;
use crate::output::what_changed;
use crate::terminal::{say, tell};
use casebook_core::citations::batch::{self, Done};
use casebook_core::citations::client::{CitationClient, OutputKind};
use casebook_core::citations::jobs::Cited;
use casebook_core::{Error, ErrorCode, save};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// One document of the queue and how it ended.
struct Row {
    input: PathBuf,
    output: Option<PathBuf>,
    outcome: Result<Cited, Error>,
    review: Option<usize>,
}

pub(crate) async fn cite_many(
    client: impl Future<Output = Result<CitationClient, Error>>,
    args: CiteArgs,
) -> Result<(), Error> {
    if args.files.iter().any(|f| f == Path::new("-")) {
        return Err(Error::invalid_input(
            "- (text from stdin) is cited on its own, not with documents.",
        ));
    }
    let options = args.options()?;
    let folder = |flag: &str, dir: Option<&Path>| match dir {
        Some(d) if !d.is_dir() => Err(Error::invalid_input(format!(
            "Citing several documents, {flag} names a folder; {} is not one.",
            d.display()
        ))),
        d => Ok(d.map(Path::to_owned)),
    };
    let out_dir = folder("-o", args.output.as_deref())?;
    let list_dir = folder("--review-list", args.review_list.as_deref())?;
    let documents = batch::documents_in(&args.files)?;
    if documents.is_empty() {
        let named: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
        return Err(Error::new(
            ErrorCode::NotADocument,
            format!("No .docx or .pptx to cite in {}.", named.join(", ")),
        ));
    }
    let plan = Plan::new(&args, &documents, out_dir.as_deref(), list_dir.as_deref());
    let client = client.await?;
    tell!(
        "Citing {} document{}, {} at a time",
        documents.len(),
        if documents.len() == 1 { "" } else { "s" },
        args.jobs
    );
    let mut rows: Vec<Option<Row>> = (0..documents.len()).map(|_| None).collect();
    let mut ready = Vec::new();
    for (i, doc) in documents.iter().enumerate() {
        match &plan.refused[i] {
            Some(e) => rows[i] = Some(plan.row(i, doc, Err(e.clone()), &args)),
            None => ready.push((i, doc.clone())),
        }
    }
    for row in rows.iter().flatten() {
        print_row(row, args.json);
    }
    let (indices, paths): (Vec<usize>, Vec<PathBuf>) = ready.into_iter().unzip();
    let queue = batch::cite_each(
        &client,
        paths,
        &options,
        usize::from(args.jobs),
        |seconds| tell!("The service is busy: the queue waits {seconds} s"),
        |d: Done| {
            let i = indices[d.index];
            let row = plan.row(i, &d.path, d.result, &args);
            print_row(&row, args.json);
            rows[i] = Some(row);
        },
    );
    // Ctrl+C: what is in flight is dropped with its unnamed files; what was saved stays.
    let cancelled = tokio::select! {
        () = queue => false,
        _ = tokio::signal::ctrl_c() => true,
    };
    let rows: Vec<Row> = rows.into_iter().flatten().collect();
    let failed = rows.iter().filter(|r| r.outcome.is_err()).count();
    if !args.json {
        print_table(&rows);
    }
    if cancelled {
        return Err(Error::new(
            ErrorCode::Cancelled,
            format!(
                "Cancelled: {} of {} documents saved; the rest were not.",
                rows.len() - failed,
                documents.len()
            ),
        ));
    }
    // The exit code says why, as for one document: the first failure's reason.
    match rows.iter().find_map(|r| r.outcome.as_ref().err()) {
        None => Ok(()),
        Some(first) => Err(Error::new(
            first.code(),
            format!("{failed} of {} documents were not cited.", documents.len()),
        )),
    }
}

/// Where each document's results go, decided before anything is sent: beside it, or in
/// the folder named, never two to one name.
struct Plan {
    outputs: Vec<PathBuf>,
    lists: Vec<Option<PathBuf>>,
    /// A document refused before citing (its output exists, say).
    refused: Vec<Option<Error>>,
}

impl Plan {
    fn new(args: &CiteArgs, docs: &[PathBuf], out: Option<&Path>, lists: Option<&Path>) -> Self {
        let mut taken: HashSet<PathBuf> = HashSet::new();
        let mut claim = |want: PathBuf| -> PathBuf {
            let folder = want.parent().unwrap_or(Path::new(".")).to_owned();
            let name = PathBuf::from(want.file_name().unwrap_or_default());
            let free = save::numbered_free(&folder, &name, |p| taken.contains(p));
            taken.insert(free.clone());
            free
        };
        let in_folder = |dir: Option<&Path>, beside: PathBuf| match dir {
            Some(d) => d.join(beside.file_name().unwrap_or_default()),
            None => beside,
        };
        let mut plan = Plan {
            outputs: Vec::new(),
            lists: Vec::new(),
            refused: Vec::new(),
        };
        for doc in docs {
            let beside = if args.reviews(doc) {
                save::review_path(doc)
            } else {
                save::cited_path(doc)
            };
            let output = claim(in_folder(out, beside));
            let list = lists.map(|d| claim(in_folder(Some(d), save::review_list_path(doc, "md"))));
            let refused = save::check_destination(Some(doc), &output, args.overwrite)
                .and_then(|()| match &list {
                    Some(l) => save::check_destination(Some(doc), l, args.overwrite),
                    None => Ok(()),
                })
                .err();
            plan.outputs.push(output);
            plan.lists.push(list);
            plan.refused.push(refused);
        }
        plan
    }

    /// Saves what `result` holds as planned for document `i`.
    fn row(&self, i: usize, input: &Path, result: Result<Cited, Error>, args: &CiteArgs) -> Row {
        let output = self.outputs[i].clone();
        let mut review = None;
        let saved = result.and_then(|cited| {
            if args.reviews(input) && cited.kind == OutputKind::Docx {
                review = Some(cited.save_review(&output, args.overwrite)?.insertions.len());
            } else {
                cited.save(&output, args.overwrite)?;
            }
            if let Some(list) = &self.lists[i] {
                cited.save_review_list(list, args.overwrite)?;
            }
            Ok(cited)
        });
        Row {
            input: input.to_owned(),
            output: saved.is_ok().then_some(output),
            outcome: saved,
            review,
        }
    }
}

fn print_row(row: &Row, json: bool) {
    let input = row.input.display().to_string();
    if json {
        let line = match &row.outcome {
            Ok(c) => serde_json::json!({
                "input": input,
                "output": row.output.as_ref().map(|p| p.display().to_string()),
                "kind": c.kind,
                "summary": c.summary,
                "summaryNote": c.summary_note,
                "trackedInsertions": row.review,
            }),
            Err(e) => serde_json::json!({"input": input, "error": e}),
        };
        say!("{line}");
        return;
    }
    match (&row.outcome, &row.output) {
        (Ok(c), Some(out)) => say!(
            "✓ {input} → {}: {}",
            out.display(),
            what_changed(&c.summary)
        ),
        (Err(e), _) => say!("✗ {input}: {}", e.message()),
        (Ok(_), None) => {}
    }
}

/// The queue's outcome as a table: a row a document, then the totals.
fn print_table(rows: &[Row]) {
    let name = |p: &Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    let width = rows
        .iter()
        .map(|r| name(&r.input).chars().count())
        .max()
        .unwrap_or(8)
        .clamp(8, 48);
    say!(
        "\n{:<width$}  {:<6}  {:>9}  {:>10}  Saved as",
        "Document",
        "Result",
        "Citations",
        "References"
    );
    for r in rows {
        let doc = name(&r.input);
        match (&r.outcome, &r.output) {
            (Ok(c), Some(out)) => say!(
                "{doc:<width$}  {:<6}  {:>9}  {:>10}  {}",
                "cited",
                c.summary.citations_inserted,
                c.summary.references_added,
                out.display()
            ),
            (Err(e), _) => say!(
                "{doc:<width$}  {:<6}  {:>9}  {:>10}  {}",
                "failed",
                "-",
                "-",
                e.message()
            ),
            (Ok(_), None) => {}
        }
    }
    let failed = rows.iter().filter(|r| r.outcome.is_err()).count();
    say!(
        "{} document{}: {} cited, {failed} failed",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        rows.len() - failed
    );
}
