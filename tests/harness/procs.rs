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

/// `pid`'s state letter and parent, from /proc; `None` once it has gone.
fn state_and_parent(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Whether `pid` still runs: a zombie has already let go of its sockets and names.
pub(crate) fn alive(pid: u32) -> bool {
    state_and_parent(pid).is_some_and(|(state, _)| state != 'Z' && state != 'X')
}

/// Every running process descended from `pid` (its children, theirs, and so on), with
/// its name.
pub(crate) fn descendants(pid: u32) -> Vec<(u32, String)> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Some((state, ppid)) = state_and_parent(p)
            && state != 'Z'
        {
            let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
            all.push((p, ppid, comm.trim().to_owned()));
        }
    }
    let mut out: Vec<(u32, String)> = Vec::new();
    let mut parents = vec![pid];
    while let Some(parent) = parents.pop() {
        for (p, _, comm) in all.iter().filter(|(_, pp, _)| *pp == parent) {
            out.push((*p, comm.clone()));
            parents.push(*p);
        }
    }
    out
}
