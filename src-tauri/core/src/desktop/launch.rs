//! Documents handed to the app by its command line: a path typed in a terminal,
//! "Open with Casebook" in a file manager, `xdg-open`. A second start of the app
//! forwards its command line to the running one, which queues the documents here
//! until the window takes them (it may not be listening yet).

use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use ts_rs::TS;

/// Files dragged over the main window, as it hears of them: only the changes a person
/// sees (the pointer's moves while dragging are not sent).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum DropUpdate {
    /// Files are being dragged over the window.
    Dragging,
    /// They left it without being dropped.
    Left,
    /// They were dropped: their paths, to be checked like any others.
    Dropped { paths: Vec<String> },
}

/// Whether the window is being dragged over, and what each drag event changes.
#[derive(Debug, Default)]
pub struct DragState {
    dragging: bool,
}

impl DragState {
    /// Files entered or moved over the window: `Dragging` the first time only.
    pub fn over(&mut self) -> Option<DropUpdate> {
        (!std::mem::replace(&mut self.dragging, true)).then_some(DropUpdate::Dragging)
    }

    pub fn left(&mut self) -> DropUpdate {
        self.dragging = false;
        DropUpdate::Left
    }

    pub fn dropped(&mut self, paths: Vec<String>) -> DropUpdate {
        self.dragging = false;
        DropUpdate::Dropped { paths }
    }
}

static OPENED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The documents in `argv` (program name first), absolute: relative paths are
/// resolved against `cwd`, the directory the command was run in, which for a
/// forwarded command line is the second process's, not ours. `file://` URIs (what
/// `%U` launchers pass) become paths; options and other URIs are not documents.
pub fn document_paths(argv: &[String], cwd: &Path) -> Vec<String> {
    argv.iter()
        .skip(1)
        .filter_map(|arg| {
            let path = if arg.starts_with("file://") {
                url::Url::parse(arg).ok()?.to_file_path().ok()?
            } else if arg.starts_with('-') || arg.contains("://") || arg.is_empty() {
                return None;
            } else {
                PathBuf::from(arg)
            };
            Some(cwd.join(path).to_string_lossy().into_owned())
        })
        .collect()
}

/// Queues the documents of a command line; how many there were.
pub fn receive(argv: &[String], cwd: &Path) -> usize {
    let paths = document_paths(argv, cwd);
    let n = paths.len();
    OPENED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(paths);
    n
}

/// The documents queued since the last call, in the order they came.
pub fn take() -> Vec<String> {
    std::mem::take(&mut *OPENED.lock().unwrap_or_else(|e| e.into_inner()))
}

/// A D-Bus-safe name for "the running Casebook on this data folder": a second start
/// goes to the instance using the same folder, while a test's or a script's app on
/// another folder (`CASEBOOK_DATA_DIR`) runs on its own.
pub fn instance_id(identifier: &str, data_dir: &Path) -> String {
    let dir = data_dir
        .canonicalize()
        .unwrap_or_else(|_| data_dir.to_path_buf());
    // FNV-1a: stable across builds and processes, unlike std's hasher.
    let hash = dir
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
        });
    format!("{identifier}.data{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drag_is_told_once_as_it_starts_and_again_as_it_ends() {
        let mut drag = DragState::default();
        assert_eq!(drag.over(), Some(DropUpdate::Dragging));
        assert_eq!(drag.over(), None, "moves are not sent");
        assert_eq!(drag.left(), DropUpdate::Left);
        assert_eq!(drag.over(), Some(DropUpdate::Dragging), "a new drag");
        let paths = vec!["/a.docx".to_owned()];
        assert_eq!(drag.dropped(paths.clone()), DropUpdate::Dropped { paths });
        assert_eq!(drag.over(), Some(DropUpdate::Dragging), "and after a drop");
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn paths_from_a_command_line_are_absolute_against_its_directory() {
        let argv = args(&[
            "casebook-app",
            "report.docx",
            "/abs/deck.pptx",
            "--verbose",
            "file:///home/a/My%20Notes.docx",
            "https://example.invalid/x.docx",
            "sub/dir/../b.docx",
        ]);
        assert_eq!(
            document_paths(&argv, Path::new("/home/a/work")),
            [
                "/home/a/work/report.docx",
                "/abs/deck.pptx",
                "/home/a/My Notes.docx",
                "/home/a/work/sub/dir/../b.docx"
            ]
        );
        assert!(document_paths(&args(&["casebook-app"]), Path::new("/")).is_empty());
    }

    #[test]
    fn queued_documents_are_taken_once() {
        assert_eq!(receive(&args(&["app", "x.docx"]), Path::new("/w")), 1);
        receive(&args(&["app", "y.pptx"]), Path::new("/v"));
        assert_eq!(take(), ["/w/x.docx", "/v/y.pptx"]);
        assert!(take().is_empty());
    }

    #[test]
    fn one_instance_per_data_folder() {
        let a = instance_id("app.casebook.desktop", Path::new("/nonexistent/a"));
        let b = instance_id("app.casebook.desktop", Path::new("/nonexistent/b"));
        assert_ne!(a, b);
        assert_eq!(
            a,
            instance_id("app.casebook.desktop", Path::new("/nonexistent/a"))
        );
        assert!(a.starts_with("app.casebook.desktop.data"));
        assert!(a.split('.').all(|part| !part.is_empty()
            && !part.starts_with(|c: char| c.is_ascii_digit())
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')));
    }
}
