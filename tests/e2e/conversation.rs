//! A mission read as a conversation in the real window, against the app's sandbox
//! speaking eve (its default, generation A; the question flow in every generation): the
//! reply grows as one item, steps name their tools, the sources list fills, the report
//! renders and saves, search finds the assembled text, questions are answered by their
//! options and replies start new turns, and axe-core finds nothing to fix.

use crate::missions::{start_in_window, until_for};
use casebook_core::missions::conversation::ItemKind;
use casebook_core::missions::store::MissionStore;
use casebook_e2e::{App, AppOptions, exclusive};
use fantoccini::Locator;
use std::time::{Duration, Instant};

async fn status_text(app: &App) -> String {
    app.text("mission-status").await.trim().to_owned()
}

/// Waits for the status chip to say `want`, or panics saying what the window shows.
async fn wait_status(app: &App, want: &str, secs: u64, context: &str) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let now = status_text(app).await;
        if now == want {
            return;
        }
        if Instant::now() >= deadline {
            let error = match app
                .client
                .find(Locator::Css("[data-testid=error-message]"))
                .await
            {
                Ok(e) => e.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            let mut last = Vec::new();
            for el in app
                .all_css("[data-testid=conversation-item]")
                .await
                .iter()
                .rev()
                .take(4)
            {
                last.push(el.text().await.unwrap_or_default());
            }
            panic!(
                "{context}: waited for {want:?}, the window says {now:?}; error {error:?}; last items {last:?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Records, from inside the page, every text the status line showed and every length
/// each open assistant item had: a test polling through WebDriver would miss most.
const WATCH: &str = r#"
window.__seen = { activity: [], growth: {} };
new MutationObserver(() => {
  const a = document.querySelector('[data-testid=mission-activity]');
  const t = a ? a.textContent.trim() : '';
  if (t && window.__seen.activity.at(-1) !== t) window.__seen.activity.push(t);
  for (const el of document.querySelectorAll('[data-testid=conversation-item][data-kind=assistant][data-open=true]')) {
    const lens = (window.__seen.growth[el.dataset.index] ??= []);
    const n = el.textContent.length;
    if (lens.at(-1) !== n) lens.push(n);
  }
}).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
return true;
"#;

/// Scrolls the conversation up to its first item as a reader would, the window paging
/// older items in on the way: while following, it holds only what covers the screen.
async fn scroll_to_first(app: &App) {
    until_for(
        30,
        "the conversation paged back to its first item",
        || async {
            app.client
                .execute(
                    "const c = document.querySelector('[data-testid=conversation]');
                 c.scrollTop = 0;
                 return c.querySelector('.earlier') === null
                     && c.querySelector('[data-testid=conversation-item]')?.dataset.index === '0';",
                    vec![],
                )
                .await
                .unwrap()
                .as_bool()
                .unwrap_or(false)
        },
    )
    .await;
}

/// The indexes of the items the window holds, in order.
async fn held_indexes(app: &App) -> Vec<usize> {
    let v = app
        .client
        .execute(
            "return [...document.querySelectorAll('[data-testid=conversation-item]')].map(e => Number(e.dataset.index));",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(v).unwrap()
}

async fn item_texts(app: &App, kind: &str) -> Vec<String> {
    let mut out = Vec::new();
    for el in app
        .all_css(&format!(
            "[data-testid=conversation-item][data-kind={kind}]"
        ))
        .await
    {
        out.push(el.text().await.unwrap_or_default());
    }
    out
}

/// Markdown's text without its links' targets (`[title](url)` shows as `title`).
fn without_link_targets(md: &str) -> String {
    let mut out = String::new();
    let mut rest = md;
    while let Some(at) = rest.find("](") {
        out.push_str(&rest[..at]);
        match rest[at..].find(')') {
            Some(end) => rest = &rest[at + end + 1..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
        .map(str::to_lowercase)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mission_reads_as_a_conversation_with_steps_sources_and_its_report() {
    let _one = exclusive().await;
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let saved = tmp.path().join("report.md");
    let app = App::launch(AppOptions {
        data_dir: Some(data.clone()),
        dialog_path: Some(saved.display().to_string()),
        env: vec![
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "40".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), "300".into()),
        ],
        ..Default::default()
    })
    .await;
    start_in_window(
        &app,
        "How does urban heat exposure affect hospital admissions?",
    )
    .await;
    app.client.execute(WATCH, vec![]).await.unwrap();
    until_for(30, "the first steps", || async {
        !app.all_css("[data-testid=conversation-item][data-kind=tool]")
            .await
            .is_empty()
    })
    .await;
    app.screenshot("mission-conversation-live").await;
    until_for(90, "the mission waits for the next message", || async {
        status_text(&app).await == "Waiting for you"
    })
    .await;
    let seen = app
        .client
        .execute("return window.__seen;", vec![])
        .await
        .unwrap();

    // What the app stored, read as core reads it: the window must show the same.
    let store = MissionStore::open(&data.join("casebook.db")).unwrap();
    let missions = store.list().await.unwrap();
    let id = &missions[0].session_id;
    let (conv, records) = store.conversation(id).await.unwrap();
    let stored = store.events(id, 0, u32::MAX).await.unwrap();
    let deltas = stored
        .iter()
        .filter(|e| e.event.event == "message.appended")
        .count();
    let completed = stored
        .iter()
        .filter(|e| e.event.event == "message.completed")
        .count();
    assert_eq!(records as usize, stored.len());
    assert!(deltas > 3 * completed, "a test of deltas needs deltas");

    // While following, the window holds only the newest items that cover its screen;
    // scrolling up pages the older ones in.
    let newest = conv.items.len() - 1;
    let held = held_indexes(&app).await;
    assert!(
        held.len() < conv.items.len() && held.last() == Some(&newest),
        "held {held:?} of {} items",
        conv.items.len()
    );
    scroll_to_first(&app).await;
    assert_eq!(
        held_indexes(&app).await,
        (0..conv.items.len()).collect::<Vec<_>>()
    );

    // One item per message, not one per delta; each the whole assembled text.
    let assistants = item_texts(&app, "assistant").await;
    assert_eq!(assistants.len(), completed, "{assistants:?}");
    let want: Vec<_> = conv
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::Assistant)
        .collect();
    for (shown, item) in assistants.iter().zip(&want) {
        let shown_words = words(shown);
        let message_words = words(&without_link_targets(&item.text));
        let missing: Vec<_> = message_words
            .iter()
            .filter(|w| !shown_words.contains(w))
            .collect();
        assert!(
            missing.is_empty(),
            "words of the message not shown: {missing:?}"
        );
    }
    // A reply grew in place: one item index took at least three lengths while open.
    let grew = seen["growth"]
        .as_object()
        .unwrap()
        .values()
        .any(|v| v.as_array().unwrap().len() >= 3);
    assert!(grew, "no message grew in place: {seen}");
    // The status line said what the agent did.
    let activity: Vec<String> = seen["activity"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    assert!(
        activity.iter().any(|a| a.starts_with("Searching: ")),
        "{activity:?}"
    );
    assert!(
        activity.iter().any(|a| a.starts_with("Reading: ")),
        "{activity:?}"
    );

    // Steps name their tools.
    let tools = app
        .all_css("[data-testid=conversation-item][data-kind=tool]")
        .await;
    assert_eq!(
        tools.len(),
        conv.items
            .iter()
            .filter(|i| i.kind == ItemKind::Tool)
            .count()
    );
    let summary = tools[0].find(Locator::Css("summary")).await.unwrap();
    let first = summary.text().await.unwrap();
    assert!(first.starts_with("Searched: "), "{first}");
    summary.click().await.unwrap();
    let detail = tools[0].text().await.unwrap();
    assert!(detail.contains("web_search"), "{detail}");
    assert_eq!(item_texts(&app, "turn").await, ["Turn 1 completed"]);
    assert_eq!(item_texts(&app, "user").await.len(), 1);
    // Back to the newest: the window keeps what covers the screen again.
    app.click("conversation-jump").await;
    until_for(10, "the newest items alone", || async {
        let held = held_indexes(&app).await;
        held.len() < conv.items.len() && held.last() == Some(&newest)
    })
    .await;

    // The sources, once per URL, each linking where it was found.
    let sources = app.all_css("[data-testid=mission-source]").await;
    assert!(!sources.is_empty());
    assert_eq!(sources.len(), conv.sources.len());
    let first_url = sources[0].attr("data-url").await.unwrap().unwrap();
    assert_eq!(first_url, conv.sources[0].url);
    // The spend the steps reported, against the budget.
    let spend = app.text("mission-spend").await;
    let spent = conv.spent_usd().unwrap();
    assert!(
        spend.contains(&format!("${:.2}", spent)),
        "{spend} vs {spent}"
    );
    assert!(
        app.axe_violations().await.is_empty(),
        "{:?}",
        app.axe_violations().await
    );
    app.screenshot("mission-conversation").await;

    // Search covers the assembled text, and a hit shows its item.
    let search = app.testid("conversation-search").await;
    search.send_keys("Findings on").await.unwrap();
    // Asked at each key: the answer drawn last is the whole query's.
    until_for(10, "the whole query's hits", || async {
        !app.all_css("[data-testid=conversation-results][data-query='Findings on'] [data-testid=conversation-hit]")
            .await
            .is_empty()
    })
    .await;
    let hit = app.testid("conversation-hit").await;
    assert!(
        hit.text().await.unwrap().contains("Findings on"),
        "a hit shows the words around its match"
    );
    let index = hit.attr("data-index").await.unwrap().unwrap();
    assert_eq!(
        index,
        conv.report().unwrap().index.to_string(),
        "the report is what has those words"
    );
    // The hits are drawn again as answers arrive: a hit found a moment ago may have been
    // replaced (WebDriver: not interactable), so the click goes to the one drawn now.
    until_for(10, "a click on the hit", || async {
        let hit = app.testid("conversation-hit").await;
        hit.click().await.is_ok()
    })
    .await;
    app.wait_css(&format!(
        "[data-testid=conversation-item][data-index=\"{index}\"]"
    ))
    .await;

    // The report, as formatted Markdown, saved as the Markdown the agent wrote.
    app.click("mission-tab-report").await;
    let report = app.testid("mission-report").await;
    let heading = report
        .find(Locator::Css("h1"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(heading.starts_with("Findings on"), "{heading}");
    assert!(
        !report
            .find_all(Locator::Css("li a"))
            .await
            .unwrap()
            .is_empty(),
        "each finding links its source"
    );
    assert!(
        app.axe_violations().await.is_empty(),
        "{:?}",
        app.axe_violations().await
    );
    app.screenshot("mission-report").await;
    app.click("export-report").await;
    until_for(10, "the report saved", || async { saved.exists() }).await;
    let text = std::fs::read_to_string(&saved).unwrap();
    assert_eq!(text.trim_end(), conv.report().unwrap().text.trim_end());

    // The raw records stay one click away.
    app.click("mission-raw").await;
    app.wait_css("[data-testid=timeline]").await;
    until_for(10, "the raw records", || async {
        app.all_css("[data-testid=event-card]").await.len() > 5
    })
    .await;
    app.close().await;
}

/// The question flow in each of eve's generations: a question held for the person is
/// answered by clicking one of the server's options (the item keeps the answer), the turn
/// goes on, and a reply typed in the composer (Enter) is a new `user` item of a new turn.
#[tokio::test(flavor = "multi_thread")]
async fn each_eve_generation_asks_is_answered_and_takes_a_reply_in_the_window() {
    let _one = exclusive().await;
    let notes_dir = tempfile::tempdir().unwrap();
    let notes = notes_dir.path().join("notifications.jsonl");
    let app = App::launch(AppOptions {
        env: vec![
            // Slow enough that the window is closed before the first question (~40
            // records in), so its notification is the one a person away would get.
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "100".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), "120".into()),
            ("CASEBOOK_NOTIFY_LOG".into(), notes.display().to_string()),
        ],
        ..Default::default()
    })
    .await;
    let main = app.client.window().await.unwrap();
    app.click("nav-settings").await;
    let base = app.text("settings-active-url").await;
    for generation in ["eve-a", "eve-b", "eve-27"] {
        crate::missions::sandbox_faults(&base, serde_json::json!({"missionProtocol": generation}))
            .await;
        app.client.switch_to_window(main.clone()).await.unwrap();
        start_in_window(
            &app,
            &format!("An ambiguous question ({generation}): does heat raise admissions?"),
        )
        .await;
        if generation == "eve-a" {
            // Asked while its window is behind the main one: a desktop notification says
            // so.
            let mission_window = app.client.window().await.unwrap();
            let focused = std::process::Command::new("xdotool")
                .args([
                    "search",
                    "--onlyvisible",
                    "--name",
                    "^Casebook$",
                    "windowfocus",
                    "--sync",
                ])
                .env("DISPLAY", app.xvfb.display())
                .status()
                .expect("xdotool");
            assert!(focused.success(), "focusing the main window");
            let deadline = Instant::now() + Duration::from_secs(60);
            while !std::fs::read_to_string(&notes)
                .is_ok_and(|s| s.contains("Mission needs your answer"))
            {
                assert!(
                    Instant::now() < deadline,
                    "no notification that the mission needs an answer: {:?}",
                    std::fs::read_to_string(&notes)
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            app.client.switch_to_window(mission_window).await.unwrap();
        }
        wait_status(&app, "Needs your answer", 30, generation).await;
        let card = app.wait_css("[data-testid=input-request]").await;
        assert!(
            !card
                .attr("data-request-id")
                .await
                .unwrap()
                .unwrap()
                .is_empty()
        );
        let options = app.all_css("[data-testid=input-option]").await;
        assert_eq!(options.len(), 2, "{generation}: the server's two options");
        let label = options[1].text().await.unwrap();
        if generation == "eve-b" {
            assert!(
                app.axe_violations().await.is_empty(),
                "{:?}",
                app.axe_violations().await
            );
            app.screenshot("mission-question").await;
        }
        options[1].click().await.unwrap();
        wait_status(
            &app,
            "Waiting for you",
            60,
            &format!("{generation}, answered"),
        )
        .await;
        assert!(app.all_css("[data-testid=input-request]").await.is_empty());
        let deadline = Instant::now() + Duration::from_secs(30);
        while app.all_css("[data-testid=input-outcome]").await.is_empty() {
            // The question may be above what the window keeps while following.
            scroll_to_first(&app).await;
            if Instant::now() >= deadline {
                let mut items = Vec::new();
                for el in app.all_css("[data-testid=conversation-item]").await {
                    items.push(el.text().await.unwrap_or_default());
                }
                let header = app.text("mission-count").await;
                let chip = status_text(&app).await;
                app.screenshot(&format!("failed-{generation}-outcome"))
                    .await;
                panic!(
                    "{generation}: the answered question shows no outcome ({chip}, {header}); items: {items:?}"
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let outcome = app.text("input-outcome").await;
        assert!(
            outcome.contains(&label),
            "{generation}: {outcome} names {label}"
        );
        assert!(
            !app.all_css("[data-testid=conversation-item][data-kind=tool]")
                .await
                .is_empty(),
            "{generation}: the answered turn did its research"
        );
        let reply = app.testid("mission-reply").await;
        reply.send_keys("And in Europe?").await.unwrap();
        if generation == "eve-b" {
            app.screenshot("mission-reply").await;
        }
        reply.send_keys("\u{E007}").await.unwrap();
        until_for(30, "the reply in the conversation", || async {
            item_texts(&app, "user")
                .await
                .iter()
                .any(|t| t == "And in Europe?")
        })
        .await;
        until_for(30, "the reply's turn ends waiting again", || async {
            status_text(&app).await == "Waiting for you"
                && item_texts(&app, "assistant")
                    .await
                    .last()
                    .is_some_and(|t| t.contains("And in Europe?"))
        })
        .await;
        app.client.close_window().await.unwrap();
    }
    app.client.switch_to_window(main).await.unwrap();
    app.close().await;
}

/// What the app's sandbox says each stream request for `session` asked (its log).
async fn stream_requests(base: &str, session: &str) -> Vec<serde_json::Value> {
    let v: serde_json::Value = reqwest::Client::new()
        .get(format!(
            "{base}/_sandbox/stream-requests?sessionId={session}"
        ))
        .bearer_auth("cbx_sandbox_demo_key")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    v["requests"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sub_agents_step_opens_its_own_conversation_read_only_then() {
    let _one = exclusive().await;
    let app = App::launch(AppOptions {
        env: vec![
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "20".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), "60".into()),
        ],
        ..Default::default()
    })
    .await;
    app.click("nav-settings").await;
    let base = app.text("settings-active-url").await.trim().to_owned();
    let main = app.client.window().await.unwrap();
    // 27 with only the parent's route, B with only the child's own stream.
    for (protocol, route) in [("eve-27", "parent"), ("eve-b", "own")] {
        crate::missions::sandbox_faults(
            &base,
            serde_json::json!({"missionProtocol": protocol, "delegate": true, "childRoute": route}),
        )
        .await;
        app.client.switch_to_window(main.clone()).await.unwrap();
        start_in_window(
            &app,
            &format!("Does shade reduce heat stroke? ({protocol})"),
        )
        .await;
        until_for(60, "the mission to reach its report", || async {
            crate::missions::status(&app).await == "waiting"
        })
        .await;
        let open = app.wait_css("[data-testid=subagent-open]").await;
        let child = open.attr("data-session").await.unwrap().unwrap();
        assert!(
            stream_requests(&base, &child).await.is_empty(),
            "{protocol}: the sub-agent's stream was read before it was opened"
        );
        open.click().await.unwrap();
        app.wait_css("[data-testid=subagent-status]").await;
        // Opened while it may still work: Refresh reads on until its session has ended.
        let mut reads = 1;
        loop {
            let status = app.text("subagent-status").await;
            if status.trim() == "complete" {
                break;
            }
            assert_eq!(status.trim(), "running", "{protocol}");
            assert!(reads < 60, "{protocol}: the sub-agent never finished");
            tokio::time::sleep(Duration::from_millis(300)).await;
            app.click("subagent-refresh").await;
            reads += 1;
            until_for(10, "the refreshed sub-agent", || async {
                app.all_css("[data-testid=subagent-refresh][disabled]")
                    .await
                    .is_empty()
            })
            .await;
        }
        let reply = "[data-testid=subagent-panel] [data-kind=assistant][data-narration=false]";
        let replies = app.all_css(reply).await;
        let text = replies.last().unwrap().text().await.unwrap();
        assert!(text.contains("Findings on"), "{protocol}: {text}");
        let asked = app
            .all_css("[data-testid=subagent-panel] [data-kind=user]")
            .await;
        let task = asked[0].text().await.unwrap();
        assert!(
            task.contains("Check every finding on"),
            "{protocol}: {task}"
        );
        // Its search step, with the sources it found, and the list of its sources.
        let found = app
            .all_css("[data-testid=subagent-panel] .step-sources a")
            .await;
        assert!(!found.is_empty(), "{protocol}: no step shows a source");
        let listed = app.all_css("[data-testid=subagent-sources] li").await;
        assert!(!listed.is_empty(), "{protocol}: no sources listed");
        let asked = stream_requests(&base, &child).await;
        assert_eq!(
            asked.len(),
            reads,
            "{protocol}: read when opened and refreshed, never else: {asked:?}"
        );
        if protocol == "eve-27" {
            app.screenshot("mission-subagent").await;
        }
        app.click("subagent-close").await;
        assert!(app.all_css("[data-testid=subagent-panel]").await.is_empty());
        app.client.close_window().await.unwrap();
    }
}

/// Where a long reply's drawn units start (`data-first` on its text), or None when no
/// assistant message `state` (`open` or `closed`) is drawn.
async fn reply_first(app: &App, state: &str) -> Option<u64> {
    let open = state == "open";
    app.client
        .execute(
            "const open = arguments[0];
             const items = [...document.querySelectorAll('[data-testid=conversation-item][data-kind=assistant]')]
               .filter((e) => (e.dataset.open === 'true') === open);
             const body = items.at(-1)?.querySelector('[data-units]');
             return body ? Number(body.dataset.first) : null;",
            vec![open.into()],
        )
        .await
        .unwrap()
        .as_u64()
}

/// Scrolls the conversation 300 px up, as a reader does, and waits for the newest reply
/// to be drawn whole: the last finished unit drawn must have moved down by just that much
/// (what the reader read stays where it was), and `[data-first]` be 0.
async fn scroll_up_and_see_it_whole(app: &App, state: &str) {
    let before = app
        .client
        .execute(
            "const c = document.querySelector('[data-testid=conversation]');
             const body = [...c.querySelectorAll('[data-kind=assistant] [data-units]')].at(-1);
             // The last finished unit: a streaming reply's last paragraph is the one
             // element that takes the next paragraph's text when it ends.
             window.__anchor = body.lastElementChild.previousElementSibling;
             window.__anchorText = window.__anchor.textContent;
             const at = window.__anchor.getBoundingClientRect().top;
             c.scrollTop -= 300;
             return at;",
            vec![],
        )
        .await
        .unwrap()
        .as_f64()
        .unwrap();
    until_for(10, "the reply drawn whole", || async {
        reply_first(app, state).await == Some(0)
    })
    .await;
    // Once the redraw and its scroll are done, two frames on.
    let after = app
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             // A formatted reply is drawn afresh: its unit is the one with the same text.
             const find = () => window.__anchor.isConnected ? window.__anchor
               : [...document.querySelectorAll('[data-kind=assistant] [data-units] > *')]
                   .findLast((e) => e.textContent === window.__anchorText);
             requestAnimationFrame(() => requestAnimationFrame(() => done(find()?.getBoundingClientRect().top ?? null)));",
            vec![],
        )
        .await
        .unwrap()
        .as_f64()
        .expect("the unit the reader saw is still drawn");
    assert!(
        (after - (before + 300.0)).abs() <= 4.0,
        "what the reader saw moved: {before} px before scrolling 300 px up, {after} px after"
    );
}

/// What `html` from core's Markdown reads as: its text, tags dropped, entities as the
/// characters they stand for.
fn html_text(html: &str) -> String {
    let mut out = String::new();
    for (i, part) in html.split('<').enumerate() {
        out.push_str(if i == 0 {
            part
        } else {
            part.split_once('>').map_or("", |(_, t)| t)
        });
    }
    [
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&amp;", "&"),
    ]
    .iter()
    .fold(out, |t, (from, to)| t.replace(from, to))
}

/// Waits for the newest formatted reply (`what`) to be drawn from a later block, then
/// checks what is drawn is the end of `all_words` (its words), and under a quarter of them.
async fn until_its_end_alone(app: &App, all_words: &[String], what: &str) {
    until_for(20, &format!("{what} drawn from a later block"), || async {
        reply_first(app, "closed")
            .await
            .is_some_and(|first| first > 0)
    })
    .await;
    let drawn = words(&reply_drawn(app).await);
    assert!(
        drawn.len() * 4 < all_words.len(),
        "{what}: {} of {} words drawn",
        drawn.len(),
        all_words.len()
    );
    assert!(
        all_words.ends_with(&drawn),
        "{what}: not its end: {drawn:?}"
    );
}

/// The drawn text of the newest assistant message.
async fn reply_drawn(app: &App) -> String {
    app.client
        .execute(
            "return [...document.querySelectorAll('[data-testid=conversation-item][data-kind=assistant]')].at(-1).textContent;",
            vec![],
        )
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_reply_is_drawn_from_its_end_while_followed_and_whole_once_the_reader_scrolls_up() {
    let _one = exclusive().await;
    // eve B's report, 10,000 deltas 2 ms apart: about 150 paragraphs over 20 s.
    let service = casebook_sandbox::start(casebook_sandbox::SandboxConfig {
        pace: casebook_sandbox::Pace::Instant,
        mission_events: Some(10),
        mission_pace_ms: Some(16),
        mission_reply_deltas: Some(10_000),
        mission_protocol: casebook_sandbox::MissionProtocol::EveB,
        ..Default::default()
    })
    .await
    .unwrap();
    let (data, options) = crate::remote::remote(service.base_url(), service.key());
    let app = App::launch(options).await;
    start_in_window(
        &app,
        "How does urban heat exposure affect hospital admissions?",
    )
    .await;

    // Following the reply as it streams, only its last paragraphs are drawn.
    until_for(
        60,
        "the streaming reply drawn from a later paragraph",
        || async {
            reply_first(&app, "open")
                .await
                .is_some_and(|first| first > 0)
        },
    )
    .await;
    // The reader scrolls up while it streams: all of it, what they read kept in place.
    scroll_up_and_see_it_whole(&app, "open").await;
    // Back to the newest: followed, and drawn from its end again.
    app.click("conversation-jump").await;
    until_for(20, "the reply cut again once followed", || async {
        reply_first(&app, "open")
            .await
            .is_some_and(|first| first > 0)
            || reply_first(&app, "closed")
                .await
                .is_some_and(|first| first > 0)
    })
    .await;

    until_for(90, "the mission waits for the next message", || async {
        status_text(&app).await == "Waiting for you"
    })
    .await;
    let store = MissionStore::open(&data.path().join("casebook.db")).unwrap();
    let id = store.list().await.unwrap()[0].session_id.clone();
    let (conv, _) = store.conversation(&id).await.unwrap();
    // The words of the reply as core formatted it (its last link may be cut mid-way,
    // and is then text).
    let all_words = words(&html_text(conv.report().unwrap().html.as_deref().unwrap()));
    assert!(
        all_words.len() > 5_000,
        "a long reply: {} words",
        all_words.len()
    );

    // Formatted, and still followed: its last blocks alone, the end of the message.
    until_its_end_alone(&app, &all_words, "the formatted reply").await;
    scroll_up_and_see_it_whole(&app, "closed").await;
    assert_eq!(
        words(&reply_drawn(&app).await),
        all_words,
        "the whole reply, once read back"
    );

    // Opened afresh (the app started again), the finished mission's window follows its
    // end: the report's last blocks alone again.
    app.close().await;
    let (_, options) = crate::remote::remote(service.base_url(), service.key());
    let app = App::launch(AppOptions {
        data_dir: Some(data.path().to_path_buf()),
        ..options
    })
    .await;
    let main = app.client.window().await.unwrap();
    app.click("nav-missions").await;
    app.wait_css(&format!(
        "[data-testid=mission-row][data-session-id='{id}']"
    ))
    .await
    .click()
    .await
    .unwrap();
    crate::missions::switch_to_mission_window(&app, &main).await;
    until_its_end_alone(&app, &all_words, "the report opened afresh").await;
    app.close().await;
}
