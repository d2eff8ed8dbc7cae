//! One Casebook per data folder, on the real session bus (`scripts/with-keyring.sh` runs
//! one): a second start hands over to a first that answers, waits for one that is
//! closing, and opens on its own beside one that never answers. None of them fails.
#![cfg(target_os = "linux")]

use casebook_core::desktop::instance::{self, Claim};
use casebook_core::desktop::launch;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn unique(test: &str) -> String {
    format!("app.casebook.test.{test}_{}", std::process::id())
}

fn argv(doc: &str) -> Vec<String> {
    vec!["casebook-app".to_owned(), doc.to_owned()]
}

fn first(id: &str) -> instance::Instance {
    match instance::claim(
        id,
        &argv("first.docx"),
        Path::new("/"),
        Duration::from_secs(5),
    ) {
        Claim::First(owned) => owned,
        Claim::HandedOver => panic!("no other start owns {id}"),
        Claim::Alone(why) => panic!("the first start is alone: {why}"),
    }
}

#[test]
fn a_second_start_hands_its_documents_to_the_first_and_wakes_it() {
    let id = unique("handover");
    let owner = first(&id);
    assert!(instance::is_owned(&id));
    let woken = Arc::new(AtomicUsize::new(0));
    let count = woken.clone();
    owner.on_handover(move || {
        count.fetch_add(1, Ordering::SeqCst);
    });
    let second = instance::claim(
        &id,
        &argv("chapter 2.docx"),
        Path::new("/home/writer"),
        Duration::from_secs(5),
    );
    assert!(matches!(second, Claim::HandedOver), "the first took it");
    assert_eq!(launch::take(), ["/home/writer/chapter 2.docx"]);
    assert_eq!(woken.load(Ordering::SeqCst), 1, "the first was woken once");
    drop(owner);
    assert!(
        !instance::is_owned(&id),
        "dropping the first gives the name up"
    );
}

#[test]
fn a_start_while_the_first_closes_waits_for_the_name_and_owns_it() {
    let id = unique("closing");
    let owner = first(&id);
    owner.closing();
    let gone = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        drop(owner);
    });
    let second = instance::claim(
        &id,
        &argv("late.docx"),
        Path::new("/"),
        Duration::from_secs(10),
    );
    gone.join().unwrap();
    let Claim::First(next) = second else {
        panic!("a start while the first closes must own the name once it is free");
    };
    assert!(instance::is_owned(&id));
    drop(next);
}

#[test]
fn a_first_start_that_never_answers_leaves_the_second_on_its_own_with_the_reason() {
    let id = unique("hung");
    // A start that owns the name and is stuck: its method never returns.
    struct Stuck;
    #[zbus::interface(name = "org.SingleInstance.DBus")]
    impl Stuck {
        async fn execute_callback(&self, _argv: Vec<String>, _cwd: String) {
            std::future::pending::<()>().await;
        }
    }
    let name = instance::bus_name(&id);
    let path = format!("/{}", name.replace('.', "/"));
    let _stuck = zbus::blocking::connection::Builder::session()
        .unwrap()
        .name(name.as_str())
        .unwrap()
        .serve_at(path.as_str(), Stuck)
        .unwrap()
        .build()
        .unwrap();
    let started = Instant::now();
    let second = instance::claim(&id, &argv("x.docx"), Path::new("/"), Duration::from_secs(2));
    let Claim::Alone(why) = second else {
        panic!("a start beside a hung one runs on its own");
    };
    assert!(
        why.contains("did not take this start within 2 s"),
        "says why: {why}"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "it was patient"
    );
}

#[test]
fn a_name_owned_by_something_else_is_not_a_hand_over() {
    let id = unique("other");
    let name = instance::bus_name(&id);
    // The name, but no Casebook behind it: every call is refused at once.
    let _other = zbus::blocking::connection::Builder::session()
        .unwrap()
        .name(name.as_str())
        .unwrap()
        .build()
        .unwrap();
    let second = instance::claim(&id, &argv("x.docx"), Path::new("/"), Duration::from_secs(1));
    assert!(matches!(second, Claim::Alone(_)));
}
