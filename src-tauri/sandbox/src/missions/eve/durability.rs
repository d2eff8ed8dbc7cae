//! Sessions kept across restarts: each in `sessions/<id>.eve.ndjson` (its header, the
//! lines it stored, the inputs that changed it), loaded and replayed on start.

use super::*;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

pub(super) fn create_file(dir: &Path, meta: &Meta) -> std::io::Result<File> {
    let path = dir.join(format!("{}.eve.ndjson", meta.session_id));
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create_new(true)
        .open(path)?;
    file.try_lock().map_err(std::io::Error::other)?;
    file.write_all(format!("{}\n", json!({ "eve": meta })).as_bytes())?;
    Ok(file)
}

/// An eve session read back from its file, with its inputs replayed; `None` when the
/// file is not one. The file stays open (and locked) for what the session does next.
pub fn load(path: &Path) -> std::io::Result<Option<EveSession>> {
    let mut file = OpenOptions::new().read(true).append(true).open(path)?;
    crate::missions::session::lock_waiting(&file, path)?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    // A line cut short by a crash is dropped, and cut from the file.
    let good_len = text.rfind('\n').map_or(0, |i| i + 1);
    if good_len < text.len() {
        file.set_len(good_len as u64)?;
    }
    let mut lines = text[..good_len].lines();
    let Some(meta) = lines
        .next()
        .and_then(|h| serde_json::from_str::<Value>(h).ok())
        .and_then(|v| serde_json::from_value::<Meta>(v.get("eve")?.clone()).ok())
    else {
        return Ok(None);
    };
    let Some(proto) = MissionProtocol::parse(&meta.protocol) else {
        return Ok(None);
    };
    let mut st = St::fresh(&meta, proto);
    for line in lines {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            break;
        };
        if let Some(rec) = v.get("rec") {
            let Some(ev) = st.pending.pop_front() else {
                break;
            };
            if proto == MissionProtocol::Eve27 && ev.kind != agent::PAUSE {
                wire::v27::render_v27(&mut st.v27, &ev);
            }
            if ev.kind == "agent.started"
                && let Some(d) = delegated_by(&st, &ev)
            {
                // Time passed while the sandbox was down: the child has finished.
                let child = child_session(&meta.session_id, proto, &st, d);
                {
                    let mut cst = child.lock();
                    while let Some(ev) = cst.pending.pop_front() {
                        child.append(&mut cst, ev);
                    }
                }
                st.children.push(Arc::new(child));
            }
            if matches!(ev.kind, "session.completed" | "session.failed") {
                st.ended_on_wire = true;
            }
            if let Some(line) = rec.as_str() {
                let rec = wire::rec_from_line(proto, line);
                if proto == MissionProtocol::EveA && ev.kind == "session.waiting" {
                    let stored: Value = serde_json::from_str(line).unwrap_or_default();
                    if let Some(t) = stored["data"]["continuationToken"].as_str() {
                        st.token = t.to_owned();
                    }
                }
                st.records.push(rec);
            }
        } else if let Some(input) = v
            .get("in")
            .and_then(|i| serde_json::from_value::<Input>(i.clone()).ok())
        {
            st.apply(&input);
        }
    }
    st.file = Some(file);
    let len = st.records.len() as u64;
    Ok(Some(EveSession {
        id: meta.session_id.clone(),
        proto,
        state: Mutex::new(st),
        grown: watch::Sender::new(len),
        wake: Notify::new(),
        requests: Mutex::new(Vec::new()),
        child_of: None,
        child_requests: Mutex::new(Vec::new()),
    }))
}

/// Loads the eve sessions kept in `dir` and sets them playing again.
pub fn load_all(
    dir: &Path,
    sessions: &EveSessions,
    pace: crate::config::Pace,
    stop: &watch::Sender<bool>,
) -> std::io::Result<()> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".eve.ndjson"))
        .collect();
    paths.sort();
    for path in paths {
        let session = match load(&path) {
            Ok(Some(s)) => Arc::new(s),
            Ok(None) => {
                tracing::warn!("{}: not an eve session, skipped", path.display());
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Err(e),
            Err(e) => {
                tracing::warn!("{}: cannot read the session, skipped: {e}", path.display());
                continue;
            }
        };
        let pace_ms = {
            let raw = std::fs::read_to_string(&path).unwrap_or_default();
            raw.lines()
                .next()
                .and_then(|h| serde_json::from_str::<Value>(h).ok())
                .and_then(|v| v["eve"]["paceMs"].as_u64())
        };
        sessions.insert(session.clone());
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            std::io::Error::other("resuming missions needs a running Tokio runtime")
        })?;
        spawn_runner(&runtime, session, pace, pace_ms, stop);
    }
    Ok(())
}
