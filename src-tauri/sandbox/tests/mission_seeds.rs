//! Where a sandbox mission's script comes from: a sequence drawn from the sandbox's
//! mission seed (`SandboxConfig::mission_seed`, `--mission-seed`, the `missionSeed`
//! knob), not the random session id, so every test sees the same missions on every run
//! and a seeded number cannot land somewhere new one day.

mod common;

use casebook_sandbox::{RunningSandbox, SandboxConfig, start};
use common::*;
use serde_json::{Value, json};

/// What a mission's stream says, without what differs on every run anyway: its ids and
/// its clock.
fn script(events: &[Ev]) -> Vec<(String, Value)> {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.retain(|k, _| {
                    !matches!(
                        k.as_str(),
                        "sessionId"
                            | "id"
                            | "ts"
                            | "sentAt"
                            | "timestamp"
                            | "at"
                            | "createdAt"
                            | "continuationToken"
                    )
                });
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    events
        .iter()
        .map(|e| {
            let mut data = e.data.clone();
            strip(&mut data);
            (e.kind.clone(), data)
        })
        .collect()
}

/// The scripts of `n` missions created one after another.
async fn missions(sb: &RunningSandbox, n: usize) -> Vec<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for _ in 0..n {
        let id = create(sb, json!({})).await;
        out.push(script(&full(sb, &id).await));
    }
    out
}

#[tokio::test]
async fn two_sandboxes_play_the_same_missions_in_the_same_order() {
    let a = start(config()).await.unwrap();
    let b = start(config()).await.unwrap();
    let (first, second) = (missions(&a, 3).await, missions(&b, 3).await);
    assert_eq!(first, second, "the same seed, the same missions");
    assert_ne!(first[0], first[1], "each mission of a run is its own");
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn another_seed_plays_other_missions_and_the_knob_starts_the_sequence_again() {
    let a = start(SandboxConfig {
        mission_seed: 7,
        ..config()
    })
    .await
    .unwrap();
    let seven = missions(&a, 2).await;
    let b = start(config()).await.unwrap();
    let zero = missions(&b, 2).await;
    assert_ne!(seven, zero, "seed 7 is not seed 0");
    // The knob at run time: from 7 again, counting from the first.
    assert_eq!(set_faults(&b, json!({"missionSeed": 7})).await, 200);
    assert_eq!(missions(&b, 2).await, seven);
    // Clearing the faults leaves the seed (and its count) as they are.
    assert_eq!(set_faults(&b, json!({"clear": true})).await, 200);
    assert_eq!(set_faults(&b, json!({"missionSeed": 7})).await, 200);
    assert_eq!(missions(&b, 1).await[0], seven[0]);
    a.stop().await;
    b.stop().await;
}
