//! Casebook itself with a history of its own: the embedded sandbox and a store in a
//! temporary folder, as the app starts them.

use casebook_core::app::{BackendChoice, Casebook, Config};
use casebook_core::backend::{Backend, SandboxOptions};
use casebook_core::missions::follower::Observer;
use std::path::Path;
use std::sync::Arc;

/// Casebook on the embedded sandbox started with `options`, its history in `dir`.
pub async fn casebook_in(
    dir: &Path,
    options: SandboxOptions,
    observer: Arc<dyn Observer>,
) -> Arc<Casebook> {
    let backend = Backend::sandbox(Some(dir), options.clone())
        .await
        .expect("the embedded sandbox starts");
    Casebook::start(
        Config {
            data_dir: dir.to_path_buf(),
            backend: BackendChoice::Fixed(Some(Box::new(backend))),
            sandbox: options,
            test_hooks: false,
        },
        observer,
    )
    .await
    .expect("Casebook starts on a history of its own")
}
