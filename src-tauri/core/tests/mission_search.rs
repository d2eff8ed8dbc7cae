//! One search across every mission in the history: objectives first, then the
//! conversations' text as the trigram index ranks it, each hit naming its mission and
//! the item it opens at; records that arrive after a search are found by the next; a
//! query too short for the index still finds objectives.

use casebook_core::missions::client::{MissionSpec, Session};
use casebook_core::missions::protocol::MissionEvent;
use casebook_core::missions::store::MissionStore;
use casebook_core::missions::store::across::HitPlace;
use serde_json::{Value, json};

fn rec(event: &str, data: Value) -> MissionEvent {
    let mut e = MissionEvent::new(None, event.into(), "null");
    e.data = data;
    e
}

/// A finished turn whose report says `report`, with a source found on the way.
fn turn(title: &str, report: &str, source: (&str, &str)) -> Vec<MissionEvent> {
    vec![
        rec("turn.started", json!({"turnId": "t1"})),
        rec("search.query", json!({"query": title})),
        rec("source.found", json!({"url": source.0, "title": source.1})),
        rec(
            "report.final",
            json!({"title": title, "summary": report, "findings": ["One"]}),
        ),
        rec("turn.completed", json!({})),
    ]
}

/// The records of a turn arrive for mission `id`.
async fn said(store: &MissionStore, id: &str, records: Vec<MissionEvent>) {
    store.append(id, records).await.unwrap();
}

async fn mission(store: &MissionStore, id: &str, objective: &str) {
    let session = Session {
        session_id: id.into(),
        continuation_token: None,
        extra: Default::default(),
    };
    let spec = MissionSpec::new(objective, 2_500);
    (store.insert_at(&session, &spec, "http://127.0.0.1:1", "/eve/v1"))
        .await
        .unwrap();
}

#[tokio::test]
async fn every_mission_is_searched_at_once_objectives_first_each_hit_at_its_place() {
    let store = MissionStore::in_memory().unwrap();
    mission(&store, "ses_shade", "Does shade reduce heat stroke?").await;
    mission(&store, "ses_trees", "Do urban trees cool streets?").await;
    said(
        &store,
        "ses_trees",
        turn(
            "Trees",
            "Canopy lowered street temperatures; the 2003 heat-wave study agrees.",
            ("https://example.org/canopy", "Canopy and street heat"),
        ),
    )
    .await;
    said(
        &store,
        "ses_shade",
        turn(
            "Shade",
            "Shelters helped.",
            ("https://example.org/shelters", "Bus shelters"),
        ),
    )
    .await;

    let found = store.search_missions("heat", 50).await.unwrap();
    assert_eq!(found.query, "heat");
    let first = &found.hits[0];
    assert_eq!(
        (first.session_id.as_str(), &first.place),
        ("ses_shade", &HitPlace::Objective),
        "an objective that says it comes first: {found:?}"
    );
    assert!(first.snippet.contains("heat stroke"), "{first:?}");
    let report = (found.hits.iter())
        .find(|h| h.session_id == "ses_trees" && h.snippet.contains("heat-wave study"))
        .unwrap_or_else(|| panic!("the report's words: {found:?}"));
    let HitPlace::Item { index, .. } = report.place else {
        panic!("a conversation hit names its item: {report:?}");
    };
    let (conversation, _) = store.conversation("ses_trees").await.unwrap();
    assert!(
        conversation.items[index as usize]
            .text
            .contains("heat-wave study"),
        "the hit opens the mission at the item that says it"
    );
    assert_eq!(report.headline, "Do urban trees cool streets?");

    // A source's title and address are the step's text: found too, case-blind.
    let source = store.search_missions("BUS SHELTERS", 50).await.unwrap();
    assert!(
        source
            .hits
            .iter()
            .any(|h| h.session_id == "ses_shade" && matches!(h.place, HitPlace::Item { .. })),
        "{source:?}"
    );
    let url = store
        .search_missions("example.org/canopy", 50)
        .await
        .unwrap();
    assert_eq!(url.hits.len(), 1, "{url:?}");
    assert_eq!(url.hits[0].session_id, "ses_trees");

    // Nothing that is not there; too short for the index, objectives still answer.
    assert!(
        store
            .search_missions("tornado", 50)
            .await
            .unwrap()
            .hits
            .is_empty()
    );
    let short = store.search_missions("do", 50).await.unwrap();
    assert!(!short.hits.is_empty());
    assert!(
        short.hits.iter().all(|h| h.place == HitPlace::Objective),
        "{short:?}"
    );
    assert!(
        store
            .search_missions("  ", 50)
            .await
            .unwrap()
            .hits
            .is_empty()
    );
}

#[tokio::test]
async fn records_that_arrive_after_a_search_are_found_by_the_next() {
    let store = MissionStore::in_memory().unwrap();
    mission(&store, "ses_storm", "What do storms do to power lines?").await;
    assert!(
        store
            .search_missions("tornado", 50)
            .await
            .unwrap()
            .hits
            .is_empty()
    );
    said(
        &store,
        "ses_storm",
        turn(
            "Storms",
            "A tornado cut 40 lines in one night.",
            ("https://example.org/grid", "Grid outages"),
        ),
    )
    .await;
    let found = store.search_missions("tornado", 50).await.unwrap();
    assert_eq!(found.hits.len(), 1, "{found:?}");
    assert_eq!(found.hits[0].session_id, "ses_storm");
    // The mission's next turn, with a report that says it again: both found.
    said(
        &store,
        "ses_storm",
        turn(
            "Storms again",
            "Another tornado, another night.",
            ("https://example.org/grid2", "Grid outages again"),
        ),
    )
    .await;
    let found = store.search_missions("tornado", 50).await.unwrap();
    assert_eq!(found.hits.len(), 2, "{found:?}");
}

/// Among the items that have a phrase, the one where it weighs most comes first: said
/// three times in a short report before once in a long one, whichever was written last.
#[tokio::test]
async fn the_item_the_phrase_weighs_most_in_comes_first() {
    let store = MissionStore::in_memory().unwrap();
    mission(&store, "ses_dense", "Cooling centres").await;
    mission(&store, "ses_sparse", "Hospital records").await;
    let dense = "Night heat, night heat and night heat again.";
    said(
        &store,
        "ses_dense",
        turn("Dense", dense, ("https://example.org/a", "A")),
    )
    .await;
    let sparse = format!(
        "{} One mention of night heat. {}",
        "Admissions rose in summer. ".repeat(20),
        "Records were kept daily. ".repeat(20)
    );
    said(
        &store,
        "ses_sparse",
        turn("Sparse", &sparse, ("https://example.org/b", "B")),
    )
    .await;
    let hits = store.search_missions("night heat", 10).await.unwrap().hits;
    let order: Vec<&str> = hits.iter().map(|h| h.session_id.as_str()).collect();
    assert_eq!(order.first(), Some(&"ses_dense"), "{hits:#?}");
    assert!(order.contains(&"ses_sparse"), "{hits:#?}");
}
