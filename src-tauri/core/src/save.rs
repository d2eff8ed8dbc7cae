//! Writing results without ever losing the user's files: never over the input,
//! never over an existing file unless asked, and only complete files get a name, so
//! a failure, a crash or `kill -9` leaves nothing behind.

use crate::error::{Error, ErrorCode, Result};
use std::fs::File;
#[cfg(target_os = "linux")]
use std::io::Seek;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The whole of a small file Casebook keeps for itself (settings, the window's place),
/// read within `max` bytes: a larger one fails as `InvalidData` without being read on.
pub fn read_small(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    File::open(path)?.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {} KB", max / 1024),
        ));
    }
    Ok(bytes)
}

/// `report.docx` → `report.cited.docx`, beside it (the CLI's default).
pub fn cited_path(input: &Path) -> PathBuf {
    with_suffix(input, |stem, ext| format!("{stem}.cited{ext}"))
}

/// `report.docx` → `report.review.docx`, beside it (the CLI's review copy).
pub fn review_path(input: &Path) -> PathBuf {
    with_suffix(input, |stem, ext| format!("{stem}.review{ext}"))
}

/// `report.docx` → `report (for review).docx`, beside it (the app's proposal).
pub fn review_path_for_people(input: &Path) -> PathBuf {
    with_suffix(input, |stem, ext| format!("{stem} (for review){ext}"))
}

/// `report.docx` → `report.citations.md` (or `.csv`), beside it: its review list.
pub fn review_list_path(input: &Path, ext: &str) -> PathBuf {
    with_suffix(input, |stem, _| format!("{stem}.citations.{ext}"))
}

/// `name` in `folder` as given, or, taken, `stem 2.ext`, `stem 3.ext`…: the first that
/// `taken` does not refuse.
pub fn numbered_free(folder: &Path, name: &Path, taken: impl Fn(&Path) -> bool) -> PathBuf {
    (1..10_000u32)
        .map(|n| numbered(folder, name, n))
        .find(|p| !taken(p))
        .unwrap_or_else(|| folder.join(name))
}

/// `name` in `folder` for n = 1, else `stem n.ext`.
pub(crate) fn numbered(folder: &Path, name: &Path, n: u32) -> PathBuf {
    if n == 1 {
        return folder.join(name);
    }
    let stem = name
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = name
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    folder.join(format!("{stem} {n}{ext}"))
}

/// `report.docx` → `report (cited).docx`, beside it (the app's save dialog proposal).
pub fn cited_path_for_people(input: &Path) -> PathBuf {
    with_suffix(input, |stem, ext| format!("{stem} (cited){ext}"))
}

fn with_suffix(input: &Path, name: impl Fn(&str, &str) -> String) -> PathBuf {
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "document".into());
    let ext = input
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    input.with_file_name(name(&stem, &ext))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Refuses a destination that is the input, or that exists when `overwrite` is off.
pub fn check_destination(input: Option<&Path>, out: &Path, overwrite: bool) -> Result<()> {
    if let Some(input) = input
        && (same_file(input, out) || input == out)
    {
        return Err(Error::invalid_input(format!(
            "{} is the original document: Casebook never writes over it. Choose another name.",
            out.display()
        )));
    }
    if out.is_dir() {
        return Err(Error::invalid_input(format!(
            "{} is a folder.",
            out.display()
        )));
    }
    if out.exists() && !overwrite {
        return Err(Error::invalid_input(format!(
            "{} already exists. Choose another name, or allow overwriting (--overwrite).",
            out.display()
        )));
    }
    let parent = parent_of(out);
    if !parent.is_dir() {
        return Err(Error::new(
            ErrorCode::Io,
            format!("The folder {} does not exist.", parent.display()),
        ));
    }
    Ok(())
}

fn parent_of(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Temporaries of a fallback save are named `.casebook-*.part`; one older than this
/// belongs to a save that was killed (a live save writes far faster).
const STALE_AFTER: Duration = Duration::from_secs(60);
const TEMP_PREFIX: &str = ".casebook-";
const TEMP_SUFFIX: &str = ".part";

/// Writes `bytes` to `out` atomically (refusing to replace an existing file unless
/// `overwrite`); see [`write_atomic_with`].
pub fn write_atomic(out: &Path, bytes: &[u8], overwrite: bool) -> Result<()> {
    write_atomic_with(out, overwrite, |f| f.write_all(bytes))
}

/// Writes `out` with `fill`, flushed to disk before it gets its name, so readers see
/// the old file or the whole new one, and a crash or `kill -9` leaves nothing: on
/// Linux the data goes to an unnamed file (`O_TMPFILE`) linked in only when complete.
/// Where the file system has no unnamed files, a `.casebook-*.part` temporary is
/// renamed into place, and one left by a killed save is removed by the next save
/// into that folder. The new file's mode comes from the umask, as any program's.
pub fn write_atomic_with(
    out: &Path,
    overwrite: bool,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    write_with(out, overwrite, Strategy::Unnamed, fill)
}

#[derive(Clone, Copy, PartialEq)]
enum Strategy {
    Unnamed,
    #[cfg_attr(not(test), allow(dead_code))]
    Named,
}

fn write_with(
    out: &Path,
    overwrite: bool,
    strategy: Strategy,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let mut pending = Pending::create_with(out, strategy)?;
    fill(pending.file_mut())
        .map_err(|e| Error::io(&format!("Cannot write {}", out.display()), &e))?;
    pending.commit(overwrite)
}

/// A file being written that gets its name, `out`, only once complete (see
/// [`write_atomic_with`]): create it, write its [`Pending::file`], then commit. Dropped
/// uncommitted, or with the process killed, it leaves nothing.
pub struct Pending {
    out: PathBuf,
    temp: Temp,
}

enum Temp {
    #[cfg(target_os = "linux")]
    Unnamed(File),
    Named(tempfile::NamedTempFile),
}

impl Pending {
    /// Starts the file that will be `out`, in `out`'s folder.
    pub fn create(out: &Path) -> Result<Self> {
        Self::create_with(out, Strategy::Unnamed)
    }

    fn create_with(out: &Path, strategy: Strategy) -> Result<Self> {
        let dir = parent_of(out);
        remove_stale_temporaries(dir);
        let fail = |e: &std::io::Error| Error::io(&format!("Cannot write {}", out.display()), e);
        #[cfg(target_os = "linux")]
        if strategy == Strategy::Unnamed {
            match unnamed::create(dir) {
                Ok(file) => {
                    return Ok(Self {
                        out: out.to_owned(),
                        temp: Temp::Unnamed(file),
                    });
                }
                Err(e) if unnamed::unsupported(&e) => {}
                Err(e) => return Err(fail(&e)),
            }
        }
        let _ = strategy;
        Ok(Self {
            out: out.to_owned(),
            temp: Temp::Named(named_temporary(dir).map_err(|e| fail(&e))?),
        })
    }

    pub fn file(&self) -> &File {
        match &self.temp {
            #[cfg(target_os = "linux")]
            Temp::Unnamed(f) => f,
            Temp::Named(t) => t.as_file(),
        }
    }

    fn file_mut(&mut self) -> &mut File {
        match &mut self.temp {
            #[cfg(target_os = "linux")]
            Temp::Unnamed(f) => f,
            Temp::Named(t) => t.as_file_mut(),
        }
    }

    /// Flushes the file to disk and gives it its name, refusing to replace an existing
    /// file unless `overwrite`.
    pub fn commit(self, overwrite: bool) -> Result<()> {
        let out = &self.out;
        let dir = parent_of(out);
        let fail = |what: &str, e: &std::io::Error| {
            Error::io(&format!("Cannot {what} {}", out.display()), e)
        };
        let exists = || Error::invalid_input(format!("{} already exists.", out.display()));
        self.file().sync_all().map_err(|e| fail("write", &e))?;
        match self.temp {
            #[cfg(target_os = "linux")]
            Temp::Unnamed(mut file) => match unnamed::link_into_place(&file, dir, out, overwrite) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists()),
                // Linking needs /proc or a capability; copy what was written instead.
                Err(e) => {
                    tracing::debug!("cannot link an unnamed file in: {e}");
                    let copy = named_temporary(dir).and_then(|mut tmp| {
                        file.seek(std::io::SeekFrom::Start(0))?;
                        std::io::copy(&mut file, tmp.as_file_mut())?;
                        tmp.as_file().sync_all()?;
                        persist(tmp, out, overwrite)
                    });
                    copy.map_err(|e| classify(e, &fail, &exists))
                }
            },
            Temp::Named(tmp) => {
                persist(tmp, out, overwrite).map_err(|e| classify(e, &fail, &exists))
            }
        }
    }
}

fn classify(
    e: std::io::Error,
    fail: &impl Fn(&str, &std::io::Error) -> Error,
    exists: &impl Fn() -> Error,
) -> Error {
    if e.kind() == std::io::ErrorKind::AlreadyExists {
        exists()
    } else {
        fail("save", &e)
    }
}

/// A `.casebook-*.part` temporary in `dir`, for file systems without unnamed files.
fn named_temporary(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX).suffix(TEMP_SUFFIX);
    // tempfile's private 0600 is for secrets; a saved document gets what the umask allows.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder.tempfile_in(dir)
}

/// Renames a complete, flushed temporary to `out`.
fn persist(tmp: tempfile::NamedTempFile, out: &Path, overwrite: bool) -> std::io::Result<()> {
    let persisted = if overwrite {
        tmp.persist(out)
    } else {
        tmp.persist_noclobber(out)
    };
    persisted.map(|_| ()).map_err(|e| e.error)
}

/// Removes `.casebook-*.part` files in `dir` older than a minute: what a save killed
/// before its rename left. Best effort; a folder that cannot be read is left alone.
pub fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX)) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let stale = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if meta.is_file() && stale && std::fs::remove_file(entry.path()).is_ok() {
            tracing::info!(
                "removed {}, left by an interrupted save",
                entry.path().display()
            );
        }
    }
}

#[cfg(target_os = "linux")]
mod unnamed {
    use std::ffi::CString;
    use std::fs::{File, OpenOptions};
    use std::io;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    use std::path::Path;

    /// An unnamed file in `dir`; 0666 so the umask decides, as for any new file.
    pub fn create(dir: &Path) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o666)
            .custom_flags(libc::O_TMPFILE)
            .open(dir)
    }

    /// The file system (or kernel) has no unnamed files: use a named temporary.
    pub fn unsupported(e: &io::Error) -> bool {
        matches!(
            e.raw_os_error(),
            Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
        )
    }

    fn cstr(p: &Path) -> io::Result<CString> {
        CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other)
    }

    fn link(file: &File, to: &Path) -> io::Result<()> {
        let to = cstr(to)?;
        let proc = cstr(Path::new(&format!("/proc/self/fd/{}", file.as_raw_fd())))?;
        // SAFETY: both paths are NUL-terminated and live across the call.
        let r = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                proc.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ENOENT) || Path::new("/proc/self/fd").exists() {
            return Err(e);
        }
        // No /proc: AT_EMPTY_PATH links the descriptor itself (may need a capability).
        // SAFETY: as above; the empty path is a static C string.
        let r = unsafe {
            libc::linkat(
                file.as_raw_fd(),
                c"".as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_EMPTY_PATH,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Gives the complete file its name. Without `overwrite` the link is the
    /// no-clobber check (EEXIST); with it, a hidden name is renamed over `out`.
    pub fn link_into_place(file: &File, dir: &Path, out: &Path, overwrite: bool) -> io::Result<()> {
        match link(file, out) {
            Err(e) if overwrite && e.kind() == io::ErrorKind::AlreadyExists => {
                let mut n = 0u32;
                let tmp = loop {
                    let nanos = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.subsec_nanos())
                        .unwrap_or_default();
                    let name = format!(
                        "{}{}-{nanos:x}-{n}{}",
                        super::TEMP_PREFIX,
                        std::process::id(),
                        super::TEMP_SUFFIX
                    );
                    let tmp = dir.join(name);
                    match link(file, &tmp) {
                        Ok(()) => break tmp,
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 100 => n += 1,
                        Err(e) => return Err(e),
                    }
                };
                std::fs::rename(&tmp, out).inspect_err(|_| {
                    let _ = std::fs::remove_file(&tmp);
                })?;
            }
            other => other?,
        }
        // The new name itself must survive a power cut.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_beside_the_input() {
        assert_eq!(
            cited_path(Path::new("/a/report.docx")),
            PathBuf::from("/a/report.cited.docx")
        );
        assert_eq!(
            cited_path_for_people(Path::new("/a/deck.v2.pptx")),
            PathBuf::from("/a/deck.v2 (cited).pptx")
        );
        assert_eq!(cited_path(Path::new("notes")), PathBuf::from("notes.cited"));
    }

    #[test]
    fn never_over_the_input_or_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.docx");
        std::fs::write(&input, b"original").unwrap();
        let code = |r: Result<()>| r.err().map(|e| e.code);
        assert_eq!(
            code(check_destination(Some(&input), &input, true)),
            Some(ErrorCode::InvalidInput)
        );
        let via_dots = dir.path().join(".").join("in.docx");
        assert_eq!(
            code(check_destination(Some(&input), &via_dots, true)),
            Some(ErrorCode::InvalidInput)
        );
        let out = dir.path().join("out.docx");
        assert!(check_destination(Some(&input), &out, false).is_ok());
        std::fs::write(&out, b"old").unwrap();
        assert_eq!(
            code(check_destination(Some(&input), &out, false)),
            Some(ErrorCode::InvalidInput)
        );
        assert!(check_destination(Some(&input), &out, true).is_ok());
        assert_eq!(
            code(check_destination(
                None,
                &dir.path().join("no/such/x.docx"),
                false
            )),
            Some(ErrorCode::Io)
        );
    }

    #[test]
    fn atomic_writes_leave_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.docx");
        write_atomic(&out, b"new", false).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert!(
            write_atomic(&out, b"newer", false).is_err(),
            "no clobber without overwrite"
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        write_atomic(&out, b"newer", true).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"newer");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("out.docx")],
            "no temporary file is left"
        );
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// The process's umask, read without changing it (Linux reports it in status).
    #[cfg(target_os = "linux")]
    fn umask() -> u32 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
        u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn saved_files_get_their_mode_from_the_umask_either_way() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let expected = 0o666 & !umask();
        for (i, strategy) in [Strategy::Unnamed, Strategy::Named].into_iter().enumerate() {
            for overwrite in [false, true] {
                let out = dir.path().join(format!("out{i}.docx"));
                write_with(&out, overwrite, strategy, |f| f.write_all(b"x")).unwrap();
                let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, expected, "mode {mode:o}, umask gives {expected:o}");
            }
            let out = dir.path().join(format!("out{i}.docx"));
            let again = write_with(&out, false, strategy, |f| f.write_all(b"y"));
            assert_eq!(again.unwrap_err().code, ErrorCode::InvalidInput);
            assert_eq!(std::fs::read(&out).unwrap(), b"x");
        }
        assert_eq!(names_in(dir.path()), ["out0.docx", "out1.docx"]);
    }

    #[test]
    fn stale_temporaries_are_removed_at_the_next_save_into_their_folder() {
        let dir = tempfile::tempdir().unwrap();
        let old = SystemTime::now() - Duration::from_secs(600);
        for name in [".casebook-killed.part", "notes.part", ".casebook-live.part"] {
            std::fs::write(dir.path().join(name), b"partial").unwrap();
        }
        for name in [".casebook-killed.part", "notes.part"] {
            let f = File::options()
                .write(true)
                .open(dir.path().join(name))
                .unwrap();
            f.set_modified(old).unwrap();
        }
        write_atomic(&dir.path().join("out.docx"), b"new", false).unwrap();
        assert_eq!(
            names_in(dir.path()),
            [".casebook-live.part", "notes.part", "out.docx"],
            "only Casebook's own temporaries, and only stale ones, go"
        );
    }

    /// The child half of `a_save_killed_midway_leaves_nothing`: saves slowly into
    /// the file the parent names, says when half is written, and waits to be killed.
    #[test]
    fn child_saves_slowly() {
        let Some(out) = std::env::var_os("CASEBOOK_TEST_SLOW_SAVE") else {
            return;
        };
        write_atomic_with(Path::new(&out), true, |f| {
            f.write_all(&vec![7u8; 4 << 20])?;
            f.sync_all()?;
            println!("HALFWAY");
            std::io::stdout().flush()?;
            std::thread::sleep(Duration::from_secs(120));
            f.write_all(b"the rest")
        })
        .unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_save_killed_midway_leaves_nothing() {
        use std::io::BufRead;
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("report.docx");
        let out = dir.path().join("report (cited).docx");
        std::fs::write(&input, b"original").unwrap();
        std::fs::write(&out, b"cited before").unwrap();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["save::tests::child_saves_slowly", "--exact", "--nocapture"])
            .env("CASEBOOK_TEST_SLOW_SAVE", &out)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let halfway = stdout.lines().map_while(|l| l.ok()).any(|l| l == "HALFWAY");
        assert!(halfway, "the child never got halfway");
        // An unnamed file is invisible while it is written.
        assert_eq!(names_in(dir.path()), ["report (cited).docx", "report.docx"]);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(
            names_in(dir.path()),
            ["report (cited).docx", "report.docx"],
            "nothing is left by the killed save"
        );
        assert_eq!(std::fs::read(&input).unwrap(), b"original");
        assert_eq!(std::fs::read(&out).unwrap(), b"cited before");
    }
}
