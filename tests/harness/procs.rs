//! The app's processes, found through /proc: which one uses a data folder, its
//! children (WebKit's web and network processes), and what they were started with.

use std::path::Path;

/// The process named `program` (its first 15 bytes, as /proc keeps them) using
/// `data_dir`, and its children with their names.
pub fn processes(data_dir: &Path, program: &str) -> (u32, Vec<(u32, String)>) {
    let want = format!("CASEBOOK_DATA_DIR={}", data_dir.display());
    let mut app = None;
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // "pid (comm) state ppid …": comm may hold spaces, so split after the last ')'.
        let Some((head, tail)) = stat.rsplit_once(')') else {
            continue;
        };
        let comm = head.split_once('(').map(|x| x.1).unwrap_or("").to_owned();
        let ppid: u32 = tail
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        parents.push((pid, ppid, comm.clone()));
        if comm == program[..program.len().min(15)] && environment(pid).contains(&want) {
            app = Some(pid);
        }
    }
    let app = app.unwrap_or_else(|| panic!("no {program} process for this data dir"));
    let children = parents
        .into_iter()
        .filter(|(_, ppid, _)| *ppid == app)
        .map(|(pid, _, comm)| (pid, comm))
        .collect();
    (app, children)
}

/// The environment `pid` was started with, as `NAME=value` strings.
pub fn environment(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .unwrap_or_default()
        .split(|&b| b == 0)
        .filter(|kv| !kv.is_empty())
        .map(|kv| String::from_utf8_lossy(kv).into_owned())
        .collect()
}
