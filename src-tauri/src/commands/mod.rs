//! Tauri commands: each a thin wrapper over core, returning `{code, message}` errors.

pub mod app;
pub mod cite;
pub mod documents;
pub mod keys;
pub mod missions;
