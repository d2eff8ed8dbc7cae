//! What every handler can reach: the keys, the rate limiter, the knobs and each service's
//! state. The routes sit above it; the state it holds sits below.

use crate::accounts::Accounts;
use crate::knobs::Handle;
use crate::missions::Missions;
use crate::owners::Owners;
use crate::ratelimit::Limiter;

/// What every handler can reach: each service's state, apart from its routes.
pub(crate) struct Shared {
    pub keys: Vec<String>,
    pub limiter: Limiter,
    pub knobs: Handle,
    pub citations: Accounts,
    pub missions: Missions,
    /// Which agent created each session, when the deployment has several.
    pub owners: Owners,
}
