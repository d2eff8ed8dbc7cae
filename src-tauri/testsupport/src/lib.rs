//! What Casebook's test suites share, as a dev-dependency of core, the CLI and the e2e
//! crate. Nothing here is built into the app or the CLI.

pub mod real_eve;
