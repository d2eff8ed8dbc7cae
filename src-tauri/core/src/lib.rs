//! Casebook's core: everything the app and the CLI do, without Tauri.
//!
//! The app crate and the `casebook` CLI are thin shells over this crate, so every
//! behaviour a user sees can be tested headless against the sandbox.
//!
//! The folders are the product: [`citations`] and [`missions`] are the two services,
//! [`net`] is how Casebook talks to either, [`desktop`] is what only a desktop app
//! needs. [`app::Casebook`] sits on top of them all and [`error`] below them all; a
//! test (`tests/module_cycles.rs`) keeps the modules free of import cycles.

// A function longer than clippy.toml's 150 lines is split (`make lint`); tests are
// exempt: a scenario reads top to bottom.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod account;
pub mod app;
pub mod backend;
pub mod bindings;
pub mod citations;
pub mod desktop;
pub mod error;
pub mod keys;
pub mod missions;
pub mod net;
pub mod paths;
pub mod save;
pub mod settings;

pub use error::{Error, ErrorCode, Result};
