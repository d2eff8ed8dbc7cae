//! What Casebook's test suites share, as a dev-dependency of core, the CLI, the sandbox
//! (whose library this links as its tests do) and the e2e crate. Nothing here is built
//! into the app or the CLI.

// A function longer than clippy.toml's 150 lines is split (`make lint`); tests are
// exempt: a scenario reads top to bottom.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod files;
pub mod history;
pub mod keyring;
pub mod real_eve;
pub mod sandbox;
pub mod store;
