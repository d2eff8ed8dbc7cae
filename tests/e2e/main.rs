//! End-to-end: the real Casebook window under Xvfb, driven through WebDriver.
//! Every test here would fail if the window did not render.

mod account;
mod bench;
mod bench_history;
mod bench_many;
mod cite;
mod conversation;
mod crash;
mod eve_today;
mod handover;
mod interactions;
mod many_missions;
mod mission_search;
mod missions;
mod real_eve;
mod reconnects;
mod remote;
mod report;
mod returned;
mod review;
mod shell;
