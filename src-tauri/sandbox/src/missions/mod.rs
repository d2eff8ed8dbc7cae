//! The investigation service (`/eve/v1`).

use crate::{Faults, Pace, Shared};
use axum::Router;
use std::path::Path;
use std::sync::Arc;

pub(crate) struct Missions {}

impl Missions {
    pub fn open(_data_dir: Option<&Path>, _pace: Pace, _faults: Faults) -> std::io::Result<Self> {
        Ok(Self {})
    }
}

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
}
