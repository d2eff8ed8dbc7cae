//! The random-cut fault (`cutRandom`): stream connections cut between events, inside
//! an event and inside a multi-byte UTF-8 character, each cut counted, and what was
//! sent before a cut always a prefix of the real stream.

mod common;

use casebook_sandbox::knobs::{Cut, CutAt};
use common::*;
use serde_json::json;

const MULTIBYTE: &str = "MISSION TYPE: research\nMISSION BUDGET TYPE: fixed\nMISSION BUDGET (hard maximum): $25.00 USD\nMISSION OBJECTIVE:\n\nВлияние жары на здоровье пожилых 高齢者 городов";

async fn raw_from(sb: &casebook_sandbox::RunningSandbox, id: &str, after: Option<&str>) -> Vec<u8> {
    let mut resp = request(sb, id, after).await;
    let mut body = Vec::new();
    // A cut connection ends in an error; what arrived before it is the point.
    while let Ok(Some(chunk)) = resp.chunk().await {
        body.extend_from_slice(&chunk);
    }
    body
}

#[test]
fn a_cut_lands_where_it_says() {
    let frame = "data: é\n\n".as_bytes();
    let cut = |at, pick| Cut {
        after_events: 0,
        at,
        pick,
    };
    assert_eq!(cut(CutAt::Between, 5).offset(frame), 0);
    // Inside the frame: never nothing, never all of it.
    for pick in 0..50 {
        let n = cut(CutAt::MidEvent, pick).offset(frame);
        assert!((1..frame.len()).contains(&n), "{n}");
    }
    // 'é' is C3 A9: the only mid-character point is before A9.
    assert_eq!(cut(CutAt::MidUtf8, 7).offset(frame), 7);
    assert_eq!(frame[7], 0xA9);
}

#[tokio::test]
async fn random_cuts_split_events_and_characters_and_lose_nothing_on_resume() {
    let sb = sandbox().await;
    let resp = post_json(
        &sb,
        "/eve/v1/session",
        &json!({"message": MULTIBYTE, "events": 200}),
    )
    .await;
    assert!(resp.status().is_success());
    let id = resp.json::<serde_json::Value>().await.unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let whole = raw_from(&sb, &id, None).await;
    assert!(std::str::from_utf8(&whole).is_ok());
    assert!(
        whole.iter().any(|&b| b >= 0x80),
        "the events carry multi-byte text"
    );

    assert_eq!(
        set_faults(&sb, json!({"cutRandom": {"seed": 7, "count": 30}})).await,
        200
    );
    let (mut mid_char, mut mid_event, mut between) = (0, 0, 0);
    let mut last: Option<String> = None;
    let mut connections = 0;
    while sb.knobs().cuts_made() < 30 {
        connections += 1;
        assert!(connections < 200, "no progress");
        let body = raw_from(&sb, &id, last.as_deref()).await;
        // Complete events end with a blank line; everything after the last one is the cut.
        let end = body
            .windows(2)
            .rposition(|w| w == b"\n\n")
            .map_or(0, |i| i + 2);
        let (done, rest) = body.split_at(end);
        match std::str::from_utf8(rest) {
            Err(e) if e.error_len().is_none() => mid_char += 1,
            _ if !rest.is_empty() => mid_event += 1,
            _ => between += 1,
        }
        let text = std::str::from_utf8(done).unwrap();
        let after = last.as_deref().map_or(0, |l| l.parse::<u64>().unwrap());
        let ids: Vec<u64> = text
            .lines()
            .filter_map(|l| l.strip_prefix("id: "))
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(
            ids,
            (after + 1..=after + ids.len() as u64).collect::<Vec<_>>()
        );
        assert!(ids.len() <= 7, "cut after at most 7 whole events");
        if let Some(&l) = ids.last() {
            last = Some(l.to_string());
        }
        // Every complete event reads exactly as in the uncut stream.
        let whole = std::str::from_utf8(&whole).unwrap();
        for event in text.split("\n\n").filter(|e| e.starts_with("id: ")) {
            assert!(whole.contains(&format!("{event}\n\n")), "{event}");
        }
    }
    assert_eq!(sb.knobs().cuts_made(), 30);
    assert!(
        mid_char > 0 && mid_event > 0 && between > 0,
        "{mid_char} {mid_event} {between}"
    );
    sb.stop().await;
}
