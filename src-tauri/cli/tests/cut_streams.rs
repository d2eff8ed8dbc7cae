//! A server whose stream responses declare a `Content-Length` shorter than their first
//! record: every body ends, cleanly, inside a record. The CLI keeps following from its
//! cursor, never takes the mission as finished, and `mission show` never says it is
//! complete or waiting, in the seeds' dialect and in each of eve's generations.

mod common;

use casebook_sandbox::MissionProtocol;
use common::casebook;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_that_always_stops_inside_a_record_never_finishes_the_mission() {
    for protocol in [
        MissionProtocol::Legacy,
        MissionProtocol::EveA,
        MissionProtocol::EveB,
        MissionProtocol::Eve27,
    ] {
        let service = casebook_testsupport::sandbox::missions(protocol, 30).await;
        let (url, key) = (service.base_url().to_owned(), service.key().to_owned());
        let data = tempfile::tempdir().unwrap();
        // Past the SSE `retry:` line and eve's opening records, short of any whole record.
        service.knobs().set(|k| k.stream_content_length = 24);
        let mut follow = casebook(
            &[
                "mission",
                "start",
                "--objective",
                "Does shade reduce heat stroke?",
                "--follow",
                "--json",
            ],
            &url,
            &key,
            data.path(),
        )
        .spawn()
        .unwrap();
        // Enough cut connections to know a cut is followed by another try, not an end.
        let asked = Instant::now();
        while service.knobs().cuts_made() < 4 {
            if let Some(status) = follow.try_wait().unwrap() {
                let out = follow.wait_with_output().unwrap();
                panic!(
                    "{protocol:?}: the CLI stopped ({status}) on a stream that never sent a whole record: {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            assert!(
                asked.elapsed() < Duration::from_secs(120),
                "{protocol:?}: the CLI did not reconnect"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            follow.try_wait().unwrap().is_none(),
            "{protocol:?}: the CLI ended"
        );
        follow.kill().unwrap();
        let out = follow.wait_with_output().unwrap();
        let first = String::from_utf8_lossy(&out.stdout);
        let first: serde_json::Value = first
            .lines()
            .next()
            .and_then(|l| serde_json::from_str(l).ok())
            .unwrap_or_else(|| panic!("{protocol:?}: no session line: {first}"));
        let sid = first["sessionId"].as_str().unwrap().to_owned();
        // No record was whole: none was printed as an event.
        assert!(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .skip(1)
                .all(|l| !l.contains("\"event\"")),
            "{protocol:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let show = casebook(
            &["mission", "show", &sid, "--json"],
            &url,
            &key,
            data.path(),
        )
        .output()
        .unwrap();
        assert!(
            show.status.success(),
            "{}",
            String::from_utf8_lossy(&show.stderr)
        );
        let shown: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
        let status = shown["status"].as_str().unwrap_or_default().to_owned();
        assert!(
            !["complete", "waiting", "needs_input", "failed"].contains(&status.as_str()),
            "{protocol:?}: show says {status} with no record saying so"
        );
    }
}
