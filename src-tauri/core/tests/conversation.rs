//! The conversation model built from recorded eve streams of each generation
//! (`tests/data/eve`): the same whole, read in random chunks (cut inside JSON strings and
//! UTF-8 characters), and grown record by record through the changes a window is sent;
//! what each kind of record becomes; and the conversation kept by the store, reopened
//! after a restart, paged and searched.

mod common;

use casebook_core::missions::conversation::{Conversation, Item, ItemKind, Source, StepStatus};
use casebook_core::missions::protocol::MissionEvent;
use casebook_core::missions::protocol::ndjson::Generation;
use casebook_core::missions::store::MissionStore;
use common::{eve_data as data, events_from as events};
use std::collections::BTreeMap;

const FILES: &[(&str, Generation)] = &[
    ("gen-a.ndjson", Generation::Events(Some(19))),
    ("gen-b.ndjson", Generation::Events(Some(26))),
    ("gen-27.ndjson", Generation::Lines),
    ("conversation-b.ndjson", Generation::Events(Some(26))),
    ("conversation-27.ndjson", Generation::Lines),
];

fn whole(name: &str) -> Conversation {
    let generation = FILES.iter().find(|(n, _)| *n == name).unwrap().1;
    Conversation::from_events(&events(generation, &[&data(name)]))
}

fn chunked(bytes: &[u8], seed: u64) -> Vec<&[u8]> {
    common::chunked(bytes, seed, 9)
}

fn of_kind(c: &Conversation, kind: ItemKind) -> Vec<&Item> {
    c.items.iter().filter(|i| i.kind == kind).collect()
}

#[test]
fn every_generation_reads_the_same_whole_in_chunks_and_record_by_record() {
    for (name, generation) in FILES {
        let bytes = data(name);
        let all = events(*generation, &[&bytes]);
        let want = Conversation::from_events(&all);
        assert!(!want.items.is_empty(), "{name}: no items");
        for seed in [1u64, 7, 1234, 99_999] {
            let got = Conversation::from_events(&events(*generation, &chunked(&bytes, seed)));
            assert_eq!(got.items, want.items, "{name}: chunked with seed {seed}");
            assert_eq!(
                got.sources, want.sources,
                "{name}: chunked with seed {seed}"
            );
        }
        // A window holds only what it was sent: the changes after each record, applied by
        // index, make the same conversation.
        let mut c = Conversation::default();
        let mut mirror: BTreeMap<u32, Item> = BTreeMap::new();
        let mut sources: Vec<Source> = Vec::new();
        for (seq, e) in all.iter().enumerate() {
            c.apply_at(e, seq as u64 + 1);
            let changes = c.take_changes();
            for item in changes.items {
                mirror.insert(item.index, item);
            }
            sources.extend(changes.sources);
            assert_eq!(
                changes.facts.items as usize,
                mirror.len(),
                "{name}: record {seq}"
            );
        }
        let mirrored: Vec<Item> = mirror.into_values().collect();
        let strip = |items: &[Item]| -> Vec<Item> {
            items
                .iter()
                .cloned()
                .map(|mut i| {
                    i.first_seq = 0;
                    i.last_seq = 0;
                    i
                })
                .collect()
        };
        assert_eq!(
            strip(&mirrored),
            strip(&want.items),
            "{name}: grown by changes"
        );
        assert_eq!(sources, want.sources, "{name}: sources grown by changes");
    }
}

#[test]
fn a_growing_message_is_one_item_open_until_it_completes() {
    let all = events(Generation::Events(Some(19)), &[&data("gen-a.ndjson")]);
    let first_delta = all
        .iter()
        .position(|e| e.event == "message.appended")
        .unwrap();
    let partial = Conversation::from_events(&all[..=first_delta + 1]);
    let open = partial.items.last().unwrap();
    assert_eq!(open.kind, ItemKind::Assistant);
    assert!(open.open);
    assert_eq!(open.text, "Plan: “search” then read é 🦀");
    assert!(open.html.is_none(), "Markdown is rendered once complete");
    let c = Conversation::from_events(&all);
    let assistants = of_kind(&c, ItemKind::Assistant);
    assert_eq!(assistants.len(), 2, "one item per message, not per delta");
    assert!(assistants[0].narration && !assistants[0].open);
    assert!(!assistants[1].narration);
    assert_eq!(
        assistants[1].html.as_deref(),
        Some("<h1>Report</h1>\n<p>Heat raises admissions.</p>\n")
    );
    assert_eq!(
        c.report().unwrap().text,
        "# Report\nHeat raises admissions."
    );
    // Two turns, each closed, and the question answered with its option's label.
    let turns = of_kind(&c, ItemKind::Turn);
    assert_eq!(
        turns.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(),
        ["Turn 1 completed", "Turn 2 completed"]
    );
    let q = of_kind(&c, ItemKind::Question)[0].request.clone().unwrap();
    assert_eq!(q.prompt, "Which heat?");
    assert_eq!(q.outcome.as_deref(), Some("answered"));
    assert_eq!(q.answer.as_deref(), Some("Weather"));
    assert!(c.pending().is_empty());
    assert_eq!(c.spent_usd(), Some(0.25));
}

#[test]
fn v26_steps_reasoning_sources_sub_agents_and_spend() {
    let c = whole("conversation-b.ndjson");
    let kinds: Vec<_> = c.items.iter().map(|i| i.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "turn",
            "user",
            "reasoning",
            "assistant",
            "tool",
            "tool",
            "tool",
            "assistant",
        ]
    );
    let reasoning = &c.items[2];
    assert_eq!(reasoning.text, "Reviews first, then data.");
    assert!(!reasoning.open);
    assert!(c.items[3].narration, "narration before a tool call");
    let search = c.items[4].step.as_ref().unwrap();
    assert_eq!(search.name, "web_search");
    assert_eq!(search.input, "urban heat exposure");
    assert_eq!(search.status, StepStatus::Completed);
    assert_eq!(search.sources.len(), 2);
    assert_eq!(c.items[4].text, "Searched: urban heat exposure");
    // Input streamed in (none came with the request), read as the URL it names.
    let read = c.items[5].step.as_ref().unwrap();
    assert_eq!(read.input, "https://who.int/heat");
    assert_eq!(c.items[5].text, "Read: WHO heat report");
    let agent = c.items[6].step.as_ref().unwrap();
    assert_eq!(
        (agent.kind.as_str(), agent.name.as_str()),
        ("agent", "fact-checker")
    );
    assert_eq!(c.items[6].text, "Sub-agent fact-checker");
    // Sources once per URL, each where it was first found.
    let urls: Vec<_> = c.sources.iter().map(|s| (s.url.as_str(), s.item)).collect();
    assert_eq!(
        urls,
        [("https://who.int/heat", 4), ("https://doi.org/10.1/x", 4)]
    );
    assert_eq!(c.spent_usd(), Some(0.875));
    let report = c.report().unwrap();
    assert!(
        report
            .html
            .as_deref()
            .unwrap()
            .contains("<a href=\"https://who.int/heat\">WHO heat report</a>")
    );
    assert_eq!(c.facts().report, Some(7));
    assert_eq!(c.activity(), None, "nothing runs once the turn is over");
    // Half way, the status line says what runs.
    let all = events(
        Generation::Events(Some(26)),
        &[&data("conversation-b.ndjson")],
    );
    let at = all
        .iter()
        .position(|e| e.event == "action.input.appended")
        .unwrap();
    let half = Conversation::from_events(&all[..at]);
    assert_eq!(
        half.activity().as_deref(),
        Some("Searching: urban heat exposure")
    );
}

#[test]
fn v27_calls_reasoning_children_and_an_answered_question() {
    let c = whole("conversation-27.ndjson");
    let kinds: Vec<_> = c.items.iter().map(|i| i.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "user",
            "turn",
            "reasoning",
            "tool",
            "tool",
            "tool",
            "question",
            "assistant"
        ]
    );
    assert_eq!(c.items[0].text, "Heat?");
    assert_eq!(c.items[2].text, "Think first.");
    let search = c.items[3].step.as_ref().unwrap();
    assert_eq!(search.input, "heat islands");
    assert_eq!(search.sources[0].url, "https://example.org/islands");
    let fetch = c.items[4].step.as_ref().unwrap();
    assert_eq!(fetch.status, StepStatus::Failed);
    assert_eq!(fetch.error.as_deref(), Some("Forbidden by the site."));
    assert_eq!(c.items[5].step.as_ref().unwrap().kind, "agent");
    let q = c.items[6].request.as_ref().unwrap();
    assert_eq!(
        (q.outcome.as_deref(), q.answer.as_deref()),
        (Some("answered"), Some("Lyon"))
    );
    assert_eq!(c.items[7].text, "Lyon is hot 🌡");
    assert!(!c.items[7].narration);
    assert_eq!(c.spent_usd(), Some(0.75));
    assert_eq!(c.items[1].text, "Turn 1 completed");
}

#[test]
fn failures_rejections_approvals_tasks_and_sign_ins() {
    let c = whole("gen-b.ndjson");
    let tools = of_kind(&c, ItemKind::Tool);
    let status: Vec<_> = tools
        .iter()
        .map(|t| {
            let s = t.step.as_ref().unwrap();
            (s.name.as_str(), s.status)
        })
        .collect();
    assert_eq!(
        status,
        [
            ("web_search", StepStatus::Failed),
            ("read_source", StepStatus::Rejected),
            ("summariser", StepStatus::Completed),
        ]
    );
    assert_eq!(
        tools[0].step.as_ref().unwrap().error.as_deref(),
        Some("Search timed out")
    );
    assert_eq!(tools[2].text, "Background task summariser");
    assert_eq!(
        tools[2].step.as_ref().unwrap().output.as_deref(),
        Some("ok")
    );
    let approval = of_kind(&c, ItemKind::Question)[0].request.clone().unwrap();
    assert_eq!(approval.kind, "tool-approval");
    assert_eq!(approval.outcome.as_deref(), Some("denied"));
    let sign_in = of_kind(&c, ItemKind::SignIn)[0];
    let s = sign_in.sign_in.as_ref().unwrap();
    assert_eq!(s.user_code.as_deref(), Some("ABCD-EFGH"));
    assert_eq!(s.outcome.as_deref(), Some("authorized"));
    assert!(!sign_in.open);
    let failure = of_kind(&c, ItemKind::Failure);
    assert_eq!(failure.last().unwrap().text, "The budget ran out.");
    // Before its completion the sign-in is open, and the status line says so.
    let all = events(Generation::Events(Some(26)), &[&data("gen-b.ndjson")]);
    let at = all
        .iter()
        .position(|e| e.event == "authorization.completed")
        .unwrap();
    let half = Conversation::from_events(&all[..at]);
    assert_eq!(half.summary().sign_ins.len(), 1);
    assert_eq!(
        half.activity().as_deref(),
        Some("Waiting for you to sign in to drive")
    );
}

#[test]
fn the_seeds_vocabulary_reads_as_a_conversation_too() {
    let rec = |event: &str, data: serde_json::Value| {
        let mut e = MissionEvent::new(None, event.into(), "null");
        e.data = data;
        e
    };
    let c = Conversation::from_events(&[
        rec("turn.started", serde_json::json!({"turnId": "t1"})),
        rec("plan", serde_json::json!({"steps": ["Search", "Read"]})),
        rec("search.query", serde_json::json!({"query": "heat"})),
        rec(
            "source.found",
            serde_json::json!({"url": "https://a.org/1", "title": "A"}),
        ),
        rec(
            "source.found",
            serde_json::json!({"url": "https://a.org/1", "title": "A"}),
        ),
        rec(
            "spend.updated",
            serde_json::json!({"spentUsd": 1.5, "budgetUsd": 25}),
        ),
        rec(
            "report.final",
            serde_json::json!({"title": "Heat", "summary": "It is hot.", "findings": ["One"]}),
        ),
        rec("turn.completed", serde_json::json!({})),
    ]);
    let kinds: Vec<_> = c.items.iter().map(|i| i.kind.as_str()).collect();
    assert_eq!(kinds, ["turn", "assistant", "tool", "assistant"]);
    assert_eq!(c.items[2].text, "Searched: heat");
    assert_eq!(c.sources.len(), 1);
    assert_eq!(c.spent_usd(), Some(1.5));
    assert_eq!(c.report().unwrap().text, "# Heat\n\nIt is hot.\n\n- One");
}

/// What a kept item reads as, beside one built from the records.
fn strip(items: &[Item]) -> Vec<(ItemKind, String, bool)> {
    items
        .iter()
        .map(|i| (i.kind, i.text.clone(), i.open))
        .collect()
}

#[tokio::test]
async fn the_kept_conversation_survives_a_restart_pages_and_searches() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missions.db");
    let all = events(
        Generation::Events(Some(26)),
        &[&data("conversation-b.ndjson")],
    );
    let want = Conversation::from_events(&all);
    let id = "ses_kept";
    {
        let store = MissionStore::open(&path).unwrap();
        store.adopt(id, "http://127.0.0.1:1", None).await.unwrap();
        store.append(id, all[..10].to_vec()).await.unwrap();
        // Kept half way, then the rest of the records arrive without it (a crash between
        // the two writes, or an older Casebook).
        let (half, upto) = store.conversation(id).await.unwrap();
        assert_eq!(upto, 10);
        assert!(half.items.len() < want.items.len());
        store.append(id, all[10..].to_vec()).await.unwrap();
    }
    let store = MissionStore::open(&path).unwrap();
    let (reopened, upto) = store.conversation(id).await.unwrap();
    assert_eq!(upto, all.len() as u64);
    assert_eq!(strip(&reopened.items), strip(&want.items));
    assert_eq!(reopened.sources, want.sources);
    // Paged by item: the tail, then a page from an index.
    let tail = store.conversation_tail(id, 3).await.unwrap();
    assert_eq!(tail.offset, want.items.len() as u32 - 3);
    assert_eq!(
        strip(&tail.items),
        strip(&want.items[want.items.len() - 3..])
    );
    assert_eq!(tail.facts.items, want.items.len() as u32);
    assert_eq!(tail.facts.spent_usd, Some(0.875));
    assert_eq!(tail.sources.len(), 2);
    let page = store.conversation_items(id, 2, 2).await.unwrap();
    assert_eq!(strip(&page.items), strip(&want.items[2..4]));
    // Search covers the assembled text, a step's sources, and is blind to ASCII case.
    let hits = store
        .search_conversation(id, "HEAT RAISES", 10)
        .await
        .unwrap();
    assert_eq!(hits.total, 1);
    assert_eq!(hits.items[0].kind, ItemKind::Assistant);
    assert_eq!(hits.query, "HEAT RAISES");
    assert!(
        hits.items[0].snippet.to_lowercase().contains("heat raises"),
        "{:?}",
        hits.items[0].snippet
    );
    let hits = store
        .search_conversation(id, "Cohort study", 10)
        .await
        .unwrap();
    assert_eq!(hits.items[0].index, 4);
    let none = store.search_conversation(id, "100%_", 10).await.unwrap();
    assert_eq!(none.total, 0, "% and _ are searched as themselves");
}

/// Two processes keep one mission's conversation: a watch saving each batch it follows,
/// and a `show` catching up from what it read before the watch wrote. What is kept never
/// goes back (it would then read the records after it twice), and a writer that finds
/// the history locked waits for it, as the CLI's polled `show` must while a watch writes.
#[tokio::test(flavor = "multi_thread")]
async fn two_writers_keep_one_conversation_that_never_goes_back_and_wait_for_each_other() {
    use casebook_core::missions::store::Appended;
    use casebook_core::missions::store::conversations::Folded;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missions.db");
    let all = events(
        Generation::Events(Some(26)),
        &[&data("conversation-b.ndjson")],
    );
    assert!(all.len() > 20, "{} records", all.len());
    let id = "ses_two_writers";
    let watch = MissionStore::open(&path).unwrap();
    watch.adopt(id, "http://127.0.0.1:1", None).await.unwrap();
    watch.append(id, all[..5].to_vec()).await.unwrap();
    let (mut followed, _) = watch.conversation(id).await.unwrap();
    let stale = followed.clone();
    let appended = watch
        .append_at(id, all[5..15].to_vec(), None)
        .await
        .unwrap();
    let folded = Folded::of(&mut followed, &appended);
    watch.save_conversation(id, folded).await.unwrap();

    // The other writer read the conversation at record 5 and the first five new records.
    let show = MissionStore::open(&path).unwrap();
    let older = Appended {
        events: appended.events[..5].to_vec(),
        facts: appended.facts[..5].to_vec(),
        status: appended.status,
    };
    let mut behind = stale;
    show.save_conversation(id, Folded::of(&mut behind, &older))
        .await
        .unwrap();
    let (kept, upto) = show.conversation(id).await.unwrap();
    assert_eq!(upto, 15, "what is kept went back");
    let want = Conversation::from_events(&all[..15]);
    assert_eq!(strip(&kept.items), strip(&want.items));
    assert_eq!(kept.sources, want.sources);

    // More records, then the history locked by another process while `show` catches up:
    // it waits for the lock instead of failing.
    watch.append(id, all[15..].to_vec()).await.unwrap();
    let mut other = rusqlite::Connection::open(&path).unwrap();
    let lock = other
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    let fresh = MissionStore::open(&path).unwrap();
    let caught_up = tokio::spawn(async move { fresh.conversation(id).await });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    lock.commit().unwrap();
    let (whole, upto) = caught_up.await.unwrap().expect("it waits for the lock");
    assert_eq!(upto, all.len() as u64);
    let want = Conversation::from_events(&all);
    assert_eq!(strip(&whole.items), strip(&want.items));
    let (reread, _) = show.conversation(id).await.unwrap();
    assert_eq!(strip(&reread.items), strip(&want.items));
}

/// A mission's first message reads as the spec it was made from: what a window shows is
/// its objective and budget, not the four labelled lines the service was sent.
#[test]
fn a_missions_first_message_reads_as_its_objective_and_budget() {
    let c = whole("gen-a.ndjson");
    let users: Vec<_> = c
        .items
        .iter()
        .filter(|i| i.kind.as_str() == "user")
        .collect();
    let first = users[0];
    assert!(first.text.starts_with("MISSION TYPE:"), "{}", first.text);
    let spec = (first.mission.as_ref()).unwrap_or_else(|| panic!("{first:?}"));
    assert!(!spec.objective.is_empty() && !spec.objective.contains("MISSION"));
    assert_eq!(spec.mission_type, "research", "{spec:?}");
    assert!(
        users[1..].iter().all(|u| u.mission.is_none()),
        "only a spec's message reads as one"
    );
}
