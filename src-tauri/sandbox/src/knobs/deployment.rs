//! How the deployment serves its agents: one root agent at `/eve/v1`, or several under
//! eve's per-agent prefixes (the `agents`, `agentPaths` and `noInfoRoute` knobs). A value
//! the knobs hold and the routes read ([`crate::agents`]), so it sits below both.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How the deployment serves its agents (the `agents`, `agentPaths` and `noInfoRoute`
/// knobs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Deployment {
    /// `["researcher", "writer"]`: one agent per name under eve's per-agent prefix, and
    /// nothing at the bare `/eve/v1`; empty: one root agent there. A session answers only
    /// under its own agent ([`crate::agents`]).
    pub agents: Vec<String>,
    /// `/eve/agents/<name>/eve/v1` (`agentPaths: "old"`) instead of `/eve/<name>/v1`
    /// (`"new"`).
    #[serde(rename = "agentPaths", with = "agent_paths")]
    pub old_paths: bool,
    /// Eve's info route (`GET <base>/info`) answers 404, as releases before it did.
    pub no_info_route: bool,
}

mod agent_paths {
    use super::*;

    pub fn serialize<S: Serializer>(old: &bool, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(if *old { "old" } else { "new" })
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        match String::deserialize(d)?.as_str() {
            "new" => Ok(false),
            "old" => Ok(true),
            other => Err(serde::de::Error::custom(format!(
                "{other:?} is not one of new, old"
            ))),
        }
    }
}

impl Deployment {
    /// The agent a path is under, and the path as the bare service serves it
    /// (`/eve/v1/...`); `None` for a path under no agent of this deployment.
    pub(crate) fn route(&self, path: &str) -> Option<(String, String)> {
        let rest = path.strip_prefix("/eve/")?;
        let (name, rest) = if self.old_paths {
            let rest = rest.strip_prefix("agents/")?;
            let (name, rest) = rest.split_once('/')?;
            (name, rest.strip_prefix("eve/v1")?)
        } else {
            let (name, rest) = rest.split_once('/')?;
            (name, rest.strip_prefix("v1")?)
        };
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        self.agents
            .iter()
            .find(|a| a.as_str() == name)
            .map(|a| (a.clone(), format!("/eve/v1{rest}")))
    }

    /// The path prefix `agent` is served under.
    pub fn prefix(&self, agent: &str) -> String {
        if self.old_paths {
            format!("/eve/agents/{agent}/eve/v1")
        } else {
            format!("/eve/{agent}/v1")
        }
    }

    /// Whether a knob's agent name is one eve could serve as a path segment.
    pub fn valid_name(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && name != "v1"
            && name != "agents"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape_serves_only_its_own_agents_paths() {
        let new = Deployment {
            agents: vec!["researcher".into(), "writer".into()],
            ..Deployment::default()
        };
        assert_eq!(
            new.route("/eve/researcher/v1/session/s1/stream"),
            Some(("researcher".into(), "/eve/v1/session/s1/stream".into()))
        );
        assert_eq!(
            new.route("/eve/writer/v1/info"),
            Some(("writer".into(), "/eve/v1/info".into()))
        );
        for refused in [
            "/eve/v1/session",
            "/eve/editor/v1/session",
            "/eve/agents/researcher/eve/v1/session",
            "/eve/researcher/v10/session",
        ] {
            assert_eq!(new.route(refused), None, "{refused}");
        }
        let old = Deployment {
            old_paths: true,
            ..new.clone()
        };
        assert_eq!(
            old.route("/eve/agents/writer/eve/v1/session"),
            Some(("writer".into(), "/eve/v1/session".into()))
        );
        assert_eq!(old.route("/eve/writer/v1/session"), None);
        assert_eq!(old.prefix("writer"), "/eve/agents/writer/eve/v1");
        assert_eq!(new.prefix("writer"), "/eve/writer/v1");
    }
}
