//! The CLI against eve deployments of today: several agents under their own API base
//! (eve's two path shapes), spend against the budget, an expired history kept as such,
//! and `watch` asking the server even for a mission stored as waiting.

mod common;

use casebook_sandbox::MissionProtocol;
use casebook_sandbox::knobs::deployment::Deployment;
use casebook_testsupport::sandbox::missions;
use common::{Cli, casebook, ok};
use std::path::Path;
use std::process::Output;

/// `casebook ARGS` with `CASEBOOK_EVE_BASE` set (`None`: unset).
async fn run_at(cli: &Cli, eve_base: Option<&str>, args: &[&str], data: &Path) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let (url, key, data) = (cli.url.clone(), cli.key.clone(), data.to_owned());
    let base = eve_base.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut c = casebook(&args, &url, &key, &data);
        match base {
            Some(b) => c.env("CASEBOOK_EVE_BASE", b),
            None => c.env_remove("CASEBOOK_EVE_BASE"),
        };
        c.output().unwrap()
    })
    .await
    .unwrap()
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out.lines().last().unwrap()).unwrap()
}

fn started_id(out: &str) -> String {
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    first["sessionId"].as_str().unwrap().to_owned()
}

const START: [&str; 6] = [
    "mission",
    "start",
    "--objective",
    "Does shade reduce heat stroke?",
    "--follow",
    "--json",
];

#[tokio::test(flavor = "multi_thread")]
async fn each_agent_path_shape_is_followed_and_a_mission_keeps_the_base_it_started_on() {
    for (old_paths, researcher, writer) in [
        (false, "/eve/researcher/v1", "/eve/writer/v1"),
        (
            true,
            "/eve/agents/researcher/eve/v1",
            "/eve/agents/writer/eve/v1",
        ),
    ] {
        let service = missions(MissionProtocol::EveB, 40).await;
        service.knobs().set(|k| {
            k.deployment = Deployment {
                agents: vec!["researcher".into(), "writer".into()],
                old_paths,
                no_info_route: false,
            }
        });
        let cli = Cli::new(&service);
        let here = tempfile::tempdir().unwrap();

        // The bare root is not served by a deployment of several agents.
        let out = run_at(&cli, None, &START, here.path()).await;
        assert!(!out.status.success(), "{researcher}: /eve/v1 answered");

        // The flag names the base; the info route names the agent there.
        let agent = ["--eve-base", researcher, "agent", "--json"];
        let info = json(&ok(&run_at(&cli, None, &agent, here.path()).await));
        assert_eq!(info["apiBase"], researcher);
        assert_eq!(info["info"]["name"], "researcher", "{info}");
        assert_eq!(info["info"]["model"], "sandbox/research-1");
        let mut start = vec!["--eve-base", researcher];
        start.extend(START);
        let started = ok(&run_at(&cli, None, &start, here.path()).await);
        let sid = started_id(&started);
        let shown = ["mission", "show", &sid, "--json"];
        let shown = json(&ok(&run_at(&cli, None, &shown, here.path()).await));
        assert_eq!(shown["status"], "waiting", "{shown}");
        assert_eq!(shown["apiBase"], researcher);

        // The setting moves to the writer (the environment variable): new missions start
        // there, and the researcher's mission is still replied to, watched and cancelled
        // on its own base (the writer's routes do not know its session).
        let info = json(&ok(&run_at(
            &cli,
            Some(writer),
            &["agent", "--json"],
            here.path(),
        )
        .await));
        assert_eq!(info["info"]["name"], "writer");
        let reply = [
            "mission",
            "reply",
            &sid,
            "--message",
            "And in Europe?",
            "--follow",
        ];
        ok(&run_at(&cli, Some(writer), &reply, here.path()).await);
        ok(&run_at(&cli, Some(writer), &["mission", "watch", &sid], here.path()).await);
        let cancel = ["mission", "cancel", &sid];
        ok(&run_at(&cli, Some(writer), &cancel, here.path()).await);
        let shown = ["mission", "show", &sid, "--json"];
        let shown = json(&ok(&run_at(&cli, Some(writer), &shown, here.path()).await));
        assert_eq!(shown["apiBase"], researcher);
        let said: Vec<&str> = shown["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["text"].as_str())
            .collect();
        assert!(
            said.iter().any(|t| t.contains("And in Europe?")),
            "{said:?}"
        );
        let second = started_id(&ok(&run_at(&cli, Some(writer), &START, here.path()).await));
        let shown = ["mission", "show", &second, "--json"];
        let shown = json(&ok(&run_at(&cli, Some(writer), &shown, here.path()).await));
        assert_eq!(shown["apiBase"], writer);
        assert_eq!(shown["status"], "waiting");

        // Proof the base matters: the researcher's session is unknown under the writer.
        let http = reqwest::Client::new();
        let wrong = http
            .post(format!("{}{writer}/session/{sid}", cli.url))
            .bearer_auth(&cli.key)
            .json(&serde_json::json!({"message": "Hello?"}))
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), 404);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_single_root_agent_stays_at_eve_v1_and_a_server_without_an_info_route_is_fine() {
    let service = missions(MissionProtocol::Eve27, 40).await;
    let cli = Cli::new(&service);
    let here = tempfile::tempdir().unwrap();
    let info = json(&ok(
        &run_at(&cli, None, &["agent", "--json"], here.path()).await
    ));
    assert_eq!(info["apiBase"], "/eve/v1");
    assert_eq!(info["info"]["name"], "casebook-sandbox");
    let sid = started_id(&ok(&run_at(&cli, None, &START, here.path()).await));
    let shown = ["mission", "show", &sid, "--json"];
    let shown = json(&ok(&run_at(&cli, None, &shown, here.path()).await));
    assert_eq!(shown["apiBase"], "/eve/v1");

    service.knobs().set(|k| {
        k.deployment = Deployment {
            no_info_route: true,
            ..Deployment::default()
        }
    });
    let info = json(&ok(
        &run_at(&cli, None, &["agent", "--json"], here.path()).await
    ));
    assert!(info["info"].is_null(), "{info}");
    let said = ok(&run_at(&cli, None, &["agent"], here.path()).await);
    assert!(said.contains("no info route"), "{said}");

    // A base that is not a path is refused before anything is sent, with the reason.
    let out = run_at(&cli, Some("eve/v1"), &["agent"], here.path()).await;
    assert_eq!(out.status.code(), Some(5));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("must start with /"), "{said}");
}

#[tokio::test(flavor = "multi_thread")]
async fn spend_past_80_percent_warns_and_past_the_budget_says_so_on_every_generation() {
    for protocol in [
        MissionProtocol::EveA,
        MissionProtocol::EveB,
        MissionProtocol::Eve27,
    ] {
        let service = missions(protocol, 40).await;
        let cli = Cli::new(&service);
        let here = tempfile::tempdir().unwrap();
        for (percent, level, words) in [
            (
                85,
                "warning",
                "warning: spent $4.25 of $5.00 — 85% of the budget",
            ),
            (
                110,
                "exceeded",
                "BUDGET EXCEEDED: spent $5.50 of $5.00 — over the budget by $0.50 (110%)",
            ),
        ] {
            service.knobs().set(|k| k.spend_percent = Some(percent));
            let mut start = START.to_vec();
            start.extend(["--budget", "5"]);
            let sid = started_id(&ok(&run_at(&cli, None, &start, here.path()).await));
            let shown = ["mission", "show", &sid, "--json"];
            let shown = json(&ok(&run_at(&cli, None, &shown, here.path()).await));
            let spent = shown["spentUsd"].as_f64().unwrap();
            let want = 5.0 * percent as f64 / 100.0;
            assert!(
                (spent - want).abs() < 0.005,
                "{protocol:?}: {spent} ≠ {want}"
            );
            assert_eq!(shown["budgetUsd"], 5.0);
            assert_eq!(shown["budget"]["level"], level, "{protocol:?}");
            assert_eq!(shown["budget"]["percent"], percent);
            let text = ok(&run_at(&cli, None, &["mission", "show", &sid], here.path()).await);
            assert!(text.contains(words), "{protocol:?}: {text}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_history_is_a_state_of_its_own_never_asked_again_and_still_readable() {
    let service = missions(MissionProtocol::EveB, 40).await;
    let cli = Cli::new(&service);
    let here = tempfile::tempdir().unwrap();
    let sid = started_id(&ok(&run_at(&cli, None, &START, here.path()).await));
    let reply = ["mission", "reply", &sid, "--message", "And in Europe?"];
    ok(&run_at(&cli, None, &reply, here.path()).await);
    service.knobs().set(|k| k.history_expired = true);
    let asked = service.stream_requests(&sid).len();
    let watch = ["mission", "watch", &sid];
    let out = run_at(&cli, None, &watch, here.path()).await;
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("expired"), "{said}");
    assert_eq!(service.stream_requests(&sid).len(), asked + 1, "asked once");
    let list = json(&ok(&run_at(
        &cli,
        None,
        &["mission", "list", "--json"],
        here.path(),
    )
    .await));
    assert_eq!(list[0]["status"], "expired", "{list}");

    // Watched again: said at once from what is stored, the server not asked.
    let out = run_at(&cli, None, &watch, here.path()).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("expired"));
    assert_eq!(
        service.stream_requests(&sid).len(),
        asked + 1,
        "asked again"
    );
    let shown = ok(&run_at(&cli, None, &["mission", "show", &sid], here.path()).await);
    assert!(shown.contains("expired"), "{shown}");
    assert!(shown.contains("Findings"), "{shown}");
    let md = ["mission", "export", &sid, "--format", "md"];
    assert!(ok(&run_at(&cli, None, &md, here.path()).await).contains("Findings"));
}

/// Another client replies to a mission this computer stored as waiting: `watch` asks the
/// server from the stored cursor and follows the turn the reply started; with nothing
/// new, it ends at once.
#[tokio::test(flavor = "multi_thread")]
async fn watch_asks_the_server_from_the_stored_cursor_even_for_a_waiting_mission() {
    for protocol in [MissionProtocol::EveB, MissionProtocol::Eve27] {
        let service = missions(protocol, 40).await;
        let cli = Cli::new(&service);
        let here = tempfile::tempdir().unwrap();
        let sid = started_id(&ok(&run_at(&cli, None, &START, here.path()).await));
        let asked = service.stream_requests(&sid).len();
        let watch = ["mission", "watch", &sid, "--json"];
        ok(&run_at(&cli, None, &watch, here.path()).await);
        assert_eq!(
            service.stream_requests(&sid).len(),
            asked + 1,
            "{protocol:?}: not asked"
        );
        let shown = ["mission", "show", &sid, "--json"];
        let before = json(&ok(&run_at(&cli, None, &shown, here.path()).await));
        assert_eq!(
            before["status"], "waiting",
            "{protocol:?}: nothing new moved it"
        );

        let sent = reqwest::Client::new()
            .post(format!("{}/eve/v1/session/{sid}", cli.url))
            .bearer_auth(&cli.key)
            .json(&serde_json::json!({"message": "Another client asks: and in Asia?"}))
            .send()
            .await
            .unwrap();
        assert!(
            sent.status().is_success(),
            "{protocol:?}: {}",
            sent.status()
        );
        let followed = ok(&run_at(&cli, None, &watch, here.path()).await);
        assert!(
            followed.contains("Another client asks"),
            "{protocol:?}: the new turn was not followed"
        );
        let after = json(&ok(&run_at(&cli, None, &shown, here.path()).await));
        assert_eq!(after["status"], "waiting", "{protocol:?}");
        let said: Vec<&str> = after["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["text"].as_str())
            .collect();
        assert!(
            said.iter().any(|t| t.contains("and in Asia?")),
            "{protocol:?}: {said:?}"
        );
        assert!(
            after["messages"].as_array().unwrap().len()
                > before["messages"].as_array().unwrap().len()
        );
    }
}
