//! The CLI's main paths against the sandbox, and its keys against the real keyring.

mod common;

use common::{BIN, fed, ok};
use std::path::Path;
use std::process::{Command, Output};

fn casebook(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("CASEBOOK_BASE_URL")
        .env_remove("CASEBOOK_CITATIONS_KEY")
        .env_remove("CASEBOOK_INVESTIGATIONS_KEY")
        .env("CASEBOOK_SANDBOX_PACE", "instant")
        // A history of its own unless the test shares one; never the user's.
        .env("CASEBOOK_DATA_DIR", tempfile::tempdir().unwrap().keep());
    for (k, v) in env {
        cmd.env(k, v);
    }
    fed(&mut cmd, stdin)
}

#[test]
fn cite_writes_beside_the_input_and_never_over_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("report.docx");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/docx/long-lorem-endnote.docx"),
        &input,
    )
    .unwrap();
    let before = std::fs::read(&input).unwrap();
    ok(&casebook(
        &[
            "--sandbox",
            "cite",
            input.to_str().unwrap(),
            "--mode",
            "every",
        ],
        &[],
        None,
    ));
    let out = dir.path().join("report.cited.docx");
    assert!(out.exists());
    assert_eq!(
        std::fs::read(&input).unwrap(),
        before,
        "the input is untouched"
    );
    // Again: the output exists, so it is refused without --overwrite and replaced with it.
    let again = casebook(&["--sandbox", "cite", input.to_str().unwrap()], &[], None);
    assert_eq!(again.status.code(), Some(5));
    ok(&casebook(
        &["--sandbox", "cite", input.to_str().unwrap(), "--overwrite"],
        &[],
        None,
    ));

    let parsed = ok(&casebook(
        &["--sandbox", "parse", out.to_str().unwrap(), "--json"],
        &[],
        None,
    ));
    let v: serde_json::Value = serde_json::from_str(&parsed).unwrap();
    assert!(
        !v["references"].as_array().unwrap().is_empty(),
        "the cited copy has references"
    );
}

#[test]
fn cite_says_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("essay.docx");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/docx/long-lorem-endnote.docx"),
        &input,
    )
    .unwrap();
    let out = dir.path().join("cited.docx");
    let json = ok(&casebook(
        &[
            "--sandbox",
            "cite",
            input.to_str().unwrap(),
            "--mode",
            "every",
            "-o",
            out.to_str().unwrap(),
            "--json",
        ],
        &[],
        None,
    ));
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(v["output"], out.to_str().unwrap());
    let s = &v["summary"];
    assert!(s["paragraphsChanged"].as_u64().unwrap() > 0, "{v}");
    assert!(
        s["citationsInserted"].as_u64().unwrap() >= s["paragraphsChanged"].as_u64().unwrap(),
        "{v}"
    );
    assert_eq!(
        s["changes"].as_array().unwrap().len() as u64,
        s["paragraphsChanged"].as_u64().unwrap()
    );
    let plain = ok(&casebook(
        &[
            "--sandbox",
            "cite",
            input.to_str().unwrap(),
            "--mode",
            "every",
            "-o",
            out.to_str().unwrap(),
            "--overwrite",
        ],
        &[],
        None,
    ));
    assert!(
        plain.contains(" changed, ") && plain.contains(" citations inserted, "),
        "{plain}"
    );
}

/// `mission list`, `export` and `watch` read the history `mission start` wrote, in
/// the data folder the app uses too.
#[test]
fn missions_are_listed_exported_and_watched_from_the_shared_history() {
    let data = tempfile::tempdir().unwrap();
    let env = [("CASEBOOK_DATA_DIR", data.path().to_str().unwrap())];
    let started = ok(&casebook(
        &[
            "--sandbox",
            "mission",
            "start",
            "--objective",
            "Do cool roofs lower indoor heat?",
            "--follow",
            "--json",
        ],
        &env,
        None,
    ));
    let mut lines = started.lines();
    let id = serde_json::from_str::<serde_json::Value>(lines.next().unwrap()).unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let followed: Vec<&str> = lines.collect();

    let list: serde_json::Value =
        serde_json::from_str(&ok(&casebook(&["mission", "list", "--json"], &env, None))).unwrap();
    assert_eq!(list[0]["sessionId"], id.as_str());
    // The embedded sandbox speaks eve: the turn ends waiting for the next message.
    assert_eq!(list[0]["status"], "waiting");
    let text = ok(&casebook(&["mission", "list"], &env, None));
    assert!(
        text.contains(&id) && text.contains("Do cool roofs lower indoor heat?"),
        "{text}"
    );

    // Watching with no service to ask replays what is stored: the same lines, and says
    // that nothing newer was asked for (another client may have replied meanwhile).
    let out = casebook(&["mission", "watch", &id, "--json"], &env, None);
    let watched = ok(&out);
    assert_eq!(watched.lines().collect::<Vec<_>>(), followed);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("No service to ask for anything newer"),
        "{said}"
    );

    let md = ok(&casebook(
        &["mission", "export", &id, "--format", "md"],
        &env,
        None,
    ));
    assert!(
        md.starts_with("# Mission: Do cool roofs lower indoor heat?"),
        "{md}"
    );
    let report = ok(&casebook(
        &["mission", "export", &id, "--format", "report"],
        &env,
        None,
    ));
    assert!(report.starts_with("# Findings on "), "{report}");
    assert!(
        md.contains(report.lines().next().unwrap()),
        "the transcript has the report"
    );
    let show = ok(&casebook(&["mission", "show", &id], &env, None));
    assert!(show.contains("  - Searched: "), "steps, one a line: {show}");
    let shown: serde_json::Value = serde_json::from_str(&ok(&casebook(
        &["mission", "show", &id, "--json"],
        &env,
        None,
    )))
    .unwrap();
    assert!(shown["spentUsd"].as_f64().unwrap() > 0.0);
    assert!(!shown["sources"].as_array().unwrap().is_empty());
    assert_eq!(shown["items"][0]["kind"], "turn");
    let file = data.path().join("t.json");
    ok(&casebook(
        &[
            "mission",
            "export",
            &id,
            "--format",
            "json",
            "-o",
            file.to_str().unwrap(),
        ],
        &env,
        None,
    ));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(json["events"].as_array().unwrap().len(), followed.len());
    let again = casebook(
        &[
            "mission",
            "export",
            &id,
            "--format",
            "json",
            "-o",
            file.to_str().unwrap(),
        ],
        &env,
        None,
    );
    assert_eq!(
        again.status.code(),
        Some(5),
        "an existing file is not replaced"
    );
    let missing = casebook(&["mission", "export", "ses_nope"], &env, None);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("[not_found]"));
}

#[test]
fn essay_text_from_stdin_is_cited_to_stdout() {
    let text = "Urban heat islands raise night-time temperatures in dense city centres.\n\nShade trees cut surface temperatures on streets and pavements.";
    let out = ok(&casebook(
        &["--sandbox", "cite", "-", "--mode", "every"],
        &[],
        Some(text),
    ));
    assert!(out.contains("References"), "{out}");
    assert!(out.contains("Urban heat islands"), "{out}");
}

/// The embedded sandbox speaks eve (generation A) by default: records have no ids, a
/// turn ends waiting for the next message, and the spend is in each step's usage.
#[test]
fn mission_start_follow_json_prints_the_id_then_one_event_a_line() {
    let out = ok(&casebook(
        &[
            "--sandbox",
            "--sandbox-pace",
            "instant",
            "mission",
            "start",
            "--objective",
            "Does green space lower heat stress?",
            "--budget",
            "12.50",
            "--follow",
            "--json",
        ],
        &[],
        None,
    ));
    let mut lines = out.lines();
    let first: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert!(first["sessionId"].as_str().unwrap().starts_with("ses_"));
    let events: Vec<serde_json::Value> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(events.len() > 10);
    for e in &events {
        assert!(
            e["id"].is_null() && e["event"].is_string() && e["data"].is_object(),
            "{e}"
        );
    }
    assert_eq!(events[0]["event"], "session.started");
    assert_eq!(events.last().unwrap()["event"], "session.waiting");
    let spent: f64 = events
        .iter()
        .filter(|e| e["event"] == "step.completed")
        .map(|e| e["data"]["usage"]["costUsd"].as_f64().unwrap())
        .sum();
    assert!(
        spent > 0.0 && spent < 12.5,
        "spend stays under the budget: {spent}"
    );
}

#[test]
fn key_status_never_prints_a_key() {
    let key = "cbk_live_abcdefghijklmnop1234";
    let no_bus = ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent");
    let out = ok(&casebook(
        &["keys", "status"],
        &[
            ("CASEBOOK_CITATIONS_KEY", key),
            ("CASEBOOK_INVESTIGATIONS_KEY", "inv_0000000000009999"),
            no_bus,
        ],
        None,
    ));
    assert!(out.contains("••••1234 (CASEBOOK_CITATIONS_KEY)"), "{out}");
    assert!(
        out.contains("••••9999 (CASEBOOK_INVESTIGATIONS_KEY)"),
        "{out}"
    );
    assert!(!out.contains("abcdefgh"), "{out}");
    // Without a keyring, the service it cannot answer for says so; the other still shows.
    let partial = casebook(
        &["keys", "status"],
        &[("CASEBOOK_CITATIONS_KEY", key), no_bus],
        None,
    );
    assert_eq!(partial.status.code(), Some(1));
    let text = String::from_utf8_lossy(&partial.stdout);
    assert!(
        text.contains("••••1234") && text.contains("investigations  unknown (keyring_unavailable)"),
        "{text}"
    );
}

/// What the keyring holds for Casebook's investigations key, read with `secret-tool`.
fn stored_investigations_key() -> String {
    let out = Command::new("secret-tool")
        .args([
            "lookup",
            "service",
            "casebook",
            "username",
            "investigations",
        ])
        .output()
        .expect("secret-tool (libsecret-tools) is installed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn keys_set_status_delete_in_the_real_keyring() {
    if std::env::var_os("CASEBOOK_KEYRING_SESSION").is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "keyring tests must run under scripts/with-keyring.sh in CI"
        );
        eprintln!("skipped: run under scripts/with-keyring.sh for the real keyring");
        return;
    }
    ok(&casebook(
        &["keys", "set", "investigations"],
        &[],
        Some("  inv-key-0123456789wxyz \n"),
    ));
    assert_eq!(stored_investigations_key(), "inv-key-0123456789wxyz");
    let status = ok(&casebook(&["keys", "status"], &[], None));
    assert!(status.contains("••••wxyz (keyring)"), "{status}");
    assert!(!status.contains("0123456789"), "{status}");
    let empty = casebook(&["keys", "set", "investigations"], &[], Some("   "));
    assert_eq!(empty.status.code(), Some(5), "an empty key is refused");
    assert_eq!(
        stored_investigations_key(),
        "inv-key-0123456789wxyz",
        "and the stored one kept"
    );
    ok(&casebook(&["keys", "delete", "investigations"], &[], None));
    assert!(stored_investigations_key().is_empty());
}

/// The CLI against a server that makes other legal choices than our sandbox's
/// default: no event ids, a cut that replays from the start, another completion
/// name then 204; parse answers of another shape; 202 for success.
#[tokio::test(flavor = "multi_thread")]
async fn the_cli_reads_other_legal_servers_tolerantly() {
    use casebook_sandbox::{EventIds, ParseShape, SandboxConfig};
    let service = casebook_sandbox::start(SandboxConfig {
        mission_events: Some(30),
        mission_pace_ms: Some(0),
        ..Default::default()
    })
    .await
    .unwrap();
    service.knobs().set(|k| {
        k.event_ids = EventIds::None;
        k.completion_event = Some("mission.finished".into());
        k.done_status_204 = true;
        k.parse_shape = ParseShape::Alternate;
        k.success_status = 202;
    });
    let url = service.base_url().to_owned();
    let key = service.key().to_owned();
    let env = [
        ("CASEBOOK_INVESTIGATIONS_KEY", key.as_str()),
        ("CASEBOOK_CITATIONS_KEY", key.as_str()),
    ];
    let run = move |args: Vec<String>| {
        let env = env.map(|(k, v)| (k, v.to_owned()));
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            casebook(&args, &env, None)
        })
    };
    let out = run(vec![
        "--base-url".into(),
        url.clone(),
        "mission".into(),
        "start".into(),
        "--objective".into(),
        "Does shade reduce heat stroke?".into(),
        "--follow".into(),
        "--json".into(),
    ])
    .await
    .unwrap();
    let text = ok(&out);
    let events: Vec<serde_json::Value> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(events.iter().all(|e| e["id"].is_null()), "no ids were sent");
    assert_eq!(events.last().unwrap()["event"], "mission.finished");
    assert_eq!(
        events.iter().filter(|e| e["event"] == "plan").count(),
        1,
        "nothing twice"
    );

    let parsed = run(vec![
        "--base-url".into(),
        url.clone(),
        "parse".into(),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/docx/long-lorem-endnote.docx"
        )
        .into(),
    ])
    .await
    .unwrap();
    let shown = ok(&parsed);
    assert!(
        shown.contains("\"blocks\""),
        "another shape is shown as it came: {shown}"
    );
    assert!(
        String::from_utf8_lossy(&parsed.stderr).contains("preview"),
        "with a note saying so"
    );
    service.stop().await;
}

/// `mission search` finds missions across the shared history by their objectives and by
/// what their conversations say, each hit naming its mission's session id and its place.
#[test]
fn missions_are_searched_across_the_history_by_objective_and_conversation() {
    let data = tempfile::tempdir().unwrap();
    let env = [("CASEBOOK_DATA_DIR", data.path().to_str().unwrap())];
    let mut ids = Vec::new();
    for objective in ["Do cool roofs lower indoor heat?", "Do green walls help?"] {
        let started = ok(&casebook(
            &[
                "--sandbox",
                "mission",
                "start",
                "--objective",
                objective,
                "--follow",
                "--json",
            ],
            &env,
            None,
        ));
        let first: serde_json::Value =
            serde_json::from_str(started.lines().next().unwrap()).unwrap();
        ids.push(first["sessionId"].as_str().unwrap().to_owned());
    }
    let by_objective = ok(&casebook(&["mission", "search", "cool roofs"], &env, None));
    let first = by_objective.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&ids[0]) && first.contains("objective"),
        "the objective first: {by_objective}"
    );
    // Words of the second mission's reply, as `mission show` reads them.
    let shown: serde_json::Value = serde_json::from_str(&ok(&casebook(
        &["mission", "show", &ids[1], "--json"],
        &env,
        None,
    )))
    .unwrap();
    let reply = (shown["messages"].as_array().unwrap().iter())
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["text"].as_str())
        .max_by_key(|t| t.len())
        .unwrap_or_else(|| panic!("a reply: {shown}"))
        .to_owned();
    // Three plain words in a row, as the reply has them, from its middle on.
    let words: Vec<&str> = reply.split_whitespace().collect();
    let phrase = (words[words.len() / 2..].windows(3))
        .find(|w| w.iter().all(|x| x.chars().all(char::is_alphanumeric)))
        .unwrap_or_else(|| panic!("three plain words in a row: {reply}"))
        .join(" ");
    let found: serde_json::Value = serde_json::from_str(&ok(&casebook(
        &["mission", "search", &phrase, "--json"],
        &env,
        None,
    )))
    .unwrap();
    let hits = found["hits"].as_array().unwrap();
    assert!(
        hits.iter()
            .any(|h| h["sessionId"] == ids[1].as_str() && h["place"]["type"] == "item"),
        "{phrase:?}: {found}"
    );
    let none = casebook(&["mission", "search", "zzzqqq nothing"], &env, None);
    assert!(none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("Nothing found"));
}
