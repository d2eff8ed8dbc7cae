//! A deployment with several root agents, and eve's info route.
//!
//! With the `agents` knob (`["researcher", "writer"]`) the investigation service is served
//! once per agent, under eve's per-agent prefix: `/eve/<name>/v1/...` (`agentPaths:
//! "new"`, eve about 0.63 and later) or `/eve/agents/<name>/eve/v1/...` (`"old"`, 0.27.3's
//! `withEve({agents})`). A multi-agent deployment has no bare `/eve/v1`: it answers 404
//! there, as it does for a path of the other shape or an agent it does not have. A
//! session belongs to the agent that created it; another agent's routes do not know it
//! (eve's `404 Session not found.`). Without the knob, the single root agent stays at
//! `/eve/v1`.
//!
//! `GET <base>/info` answers eve's agent info (`kind: "eve-agent-info"`, `version: 1`,
//! `agent: {name, description, model: {id}}`, and the lists eve adds, empty), with the
//! same key as the session routes, in eve mode only; `noInfoRoute: true` answers 404 there,
//! as eve releases before the route did.

use crate::auth::admit;
use crate::errors::{error, eve_session_not_found};
use crate::knobs::MissionProtocol;
use crate::shared::Shared;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use std::sync::Arc;

/// The name the single root agent's info gives.
pub const ROOT_AGENT: &str = "casebook-sandbox";
/// The model every agent's info names (the one its steps name).
const MODEL_ID: &str = "sandbox/research-1";

/// The agent a request came in under, for the info route.
#[derive(Clone)]
struct Agent(String);

/// The session a `/eve/v1/session/{id}...` path names.
fn session_of(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/eve/v1/session/")?;
    Some(rest.split('/').next().unwrap_or(rest)).filter(|id| !id.is_empty())
}

fn not_served(uri: &Uri) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "not_found",
        &format!("No such endpoint: {}", uri.path()),
    )
}

/// Wrapped around the whole router (it changes the path routing sees): serves each agent
/// under its prefix, and keeps each session to its agent.
pub(crate) async fn route_agents(
    State(shared): State<Arc<Shared>>,
    mut req: Request,
    next: Next,
) -> Response {
    let d = shared.knobs.get(|k| k.deployment.clone());
    let path = req.uri().path().to_owned();
    if d.agents.is_empty() || !path.starts_with("/eve/") {
        return next.run(req).await;
    }
    let Some((agent, bare)) = d.route(&path) else {
        return not_served(req.uri());
    };
    if let Some(id) = session_of(&bare) {
        let owner = shared.owners.lock().get(id).cloned();
        if owner.is_some_and(|o| o != agent) {
            return eve_session_not_found();
        }
    }
    let pq = match req.uri().query() {
        Some(q) => format!("{bare}?{q}"),
        None => bare.clone(),
    };
    let mut parts = req.uri().clone().into_parts();
    parts.path_and_query = pq.parse().ok();
    if let Ok(uri) = Uri::from_parts(parts) {
        *req.uri_mut() = uri;
    }
    req.extensions_mut().insert(Agent(agent.clone()));
    let resp = next.run(req).await;
    if bare == "/eve/v1/session" && resp.status().is_success() {
        let id = resp
            .headers()
            .get("x-eve-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let Some(id) = id {
            shared.owners.lock().insert(id, agent);
        }
    }
    resp
}

pub(crate) fn routes() -> axum::Router<Arc<Shared>> {
    axum::Router::new().route("/eve/v1/info", get(info))
}

async fn info(
    State(shared): State<Arc<Shared>>,
    agent: Option<axum::Extension<Agent>>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let d = shared.knobs.get(|k| k.deployment.clone());
    if d.no_info_route || shared.knobs.get(|k| k.mission_protocol) == MissionProtocol::Legacy {
        return not_served(&uri);
    }
    if let Err(resp) = admit(&shared, &headers) {
        return resp;
    }
    let name = agent.map_or_else(|| ROOT_AGENT.to_owned(), |a| a.0.0.clone());
    axum::Json(json!({
        "kind": "eve-agent-info",
        "version": 1,
        "mode": "production",
        "agent": {
            "name": name,
            "description": format!("The sandbox's research agent, as {name}."),
            "agentRoot": "agent",
            "appRoot": ".",
            "model": {"id": MODEL_ID},
        },
        "capabilities": {"devRoutes": false},
        "channels": {"authored": [], "available": [], "disabledFramework": [], "framework": []},
        "connections": [],
        "diagnostics": {"discoveryErrors": 0, "discoveryWarnings": 0},
        "hooks": [],
        "instructions": {"dynamic": [], "static": null},
        "sandbox": null,
        "schedules": [],
        "skills": {"dynamic": [], "static": []},
        "subagents": {"local": [], "total": 0},
        "tools": {"authored": [], "available": [], "disabledFramework": [], "dynamic": [], "framework": [], "reserved": []},
        "workflow": {"enabled": false, "toolName": "workflow"},
        "workspace": {"resourceRoot": null, "rootEntries": []},
    }))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_path_names_its_session() {
        assert_eq!(session_of("/eve/v1/session/abc/cancel"), Some("abc"));
        assert_eq!(session_of("/eve/v1/session"), None);
    }
}
