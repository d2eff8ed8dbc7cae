//! Casebook's core: everything the app and the CLI do, without Tauri.
//!
//! The app crate and the `casebook` CLI are thin shells over this crate, so every
//! behaviour a user sees can be tested headless against the sandbox.

pub mod account;
mod api;
pub mod app;
pub mod backend;
pub mod bindings;
pub mod cards;
pub mod citations;
pub mod connection;
pub mod documents;
pub mod error;
pub mod follower;
pub mod http;
pub mod jobs;
pub mod keys;
pub mod launch;
pub mod missions;
pub mod paths;
pub mod reader;
pub mod renderer;
pub mod save;
pub mod settings;
pub mod sse;
pub mod store;
pub mod stream;
pub mod summary;
pub mod transcript;
pub mod transfer;
pub mod window_place;

pub use error::{Error, ErrorCode, Result};
