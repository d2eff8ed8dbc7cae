//! A delegated sub-agent's stream, read once to where it stands: through the parent's
//! route (`<base>/session/{parent}/subagents/{callId}/{child}/stream`, eve's
//! `subagent-stream-route.ts`), or, where the parent's route is not there (404), at the
//! stream path the parent's record named. The same request, key and framing as a
//! mission's own stream; bounded in records, bytes and time, since nothing follows it.
//! One opening is one request, made when the person opens or refreshes the sub-agent:
//! a cut stream is never asked again by itself, so it cannot become a reconnect storm.

use crate::error::{Error, ErrorCode, Result};
use crate::missions::client::{InvestigationClient, encode_segment};
use crate::missions::conversation::ChildRef;
use crate::missions::protocol::MissionEvent;
use crate::missions::protocol::ndjson::Transport;
use crate::missions::stream::SETTLE;
use crate::missions::stream::framing::{Framed, Framing};
use crate::net::http::network_error;
use std::time::Duration;

/// How much of a sub-agent's stream one opening reads.
#[derive(Debug, Clone, Copy)]
pub struct ChildLimits {
    /// Records (events) read in one opening; a sub-agent that has written more shows
    /// the first ones, and the next opening reads on from there.
    pub records: usize,
    /// Bytes read in one opening.
    pub bytes: usize,
    /// How long one opening may take, from the request to the last byte.
    pub time: Duration,
}

impl Default for ChildLimits {
    fn default() -> Self {
        Self {
            records: 20_000,
            bytes: 32 << 20,
            time: Duration::from_secs(20),
        }
    }
}

/// Where a sub-agent's stream resumes: its NDJSON lines consumed and, for SSE, the
/// last event id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChildCursor {
    pub next: u64,
    pub last_event_id: Option<String>,
}

/// What one opening read.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildRead {
    /// The records after the cursor, in order.
    pub events: Vec<MissionEvent>,
    pub cursor: ChildCursor,
    /// A bound stopped the reading before the stream's newest record.
    pub cut_short: bool,
    /// The stream said it is finished: nothing will follow.
    pub finished: bool,
    /// The path it was read at.
    pub path: String,
}

impl InvestigationClient {
    /// The parent's route to `child`'s stream.
    pub fn child_route(&self, parent: &str, child: &ChildRef) -> Result<String> {
        let tail = format!(
            "/subagents/{}/{}/stream",
            encode_segment(&child.call_id),
            encode_segment(&child.session_id)
        );
        crate::missions::client::session_path_under(self.api_base(), parent, &tail)
    }

    /// The stream path the record named, as a path under this client's API base: eve
    /// writes it under its own `/eve/v1`, which a deployment with several agents serves
    /// under another base. A path outside the base (or a URL) is not followed: the key
    /// goes only where the parent's stream is read.
    pub fn child_own_path(&self, child: &ChildRef) -> Option<String> {
        // eve 0.30 names the child's session and no path: its own stream is where every
        // session's is.
        let Some(path) = child.stream_path.as_deref() else {
            return crate::missions::client::session_path_under(
                self.api_base(),
                &child.session_id,
                "/stream",
            )
            .ok();
        };
        if path.contains("://") || path.contains(['?', '#', '\\']) {
            return None;
        }
        let base = self.api_base();
        let rest = path
            .strip_prefix(crate::missions::client::agent::DEFAULT_API_BASE)
            .or_else(|| path.strip_prefix(base))
            .filter(|r| r.starts_with("/session/"))?;
        if rest.split('/').any(|s| s == "." || s == "..") {
            return None;
        }
        Some(format!("{base}{rest}"))
    }

    /// Reads `child`'s stream from `from` to where it stands now: to the line the
    /// response's tail index names, or, without one, until nothing more comes for a
    /// moment; or to its end.
    pub async fn read_child(
        &self,
        parent: &str,
        child: &ChildRef,
        from: &ChildCursor,
        limits: ChildLimits,
    ) -> Result<ChildRead> {
        let deadline = tokio::time::Instant::now() + limits.time;
        let route = self.child_route(parent, child)?;
        let (path, resp) = match self.open_child(&route, from).await {
            Err(e) if e.status == Some(404) => match self.child_own_path(child) {
                Some(own) if own != route => {
                    let resp = self.open_child(&own, from).await?;
                    (own, resp)
                }
                _ => return Err(e),
            },
            Err(e) => return Err(e),
            Ok(resp) => (route, resp),
        };
        read_to_tail(resp, path, from, limits, deadline).await
    }

    async fn open_child(&self, path: &str, from: &ChildCursor) -> Result<reqwest::Response> {
        let query = [
            ("startIndex", from.next.to_string()),
            ("includeTailIndex", "1".to_owned()),
        ];
        let resp = self
            .connect(path, &query, from.last_event_id.as_deref(), false)
            .await?;
        if resp.status().as_u16() == 429 {
            return Err(Error::new(
                ErrorCode::RateLimited,
                "The service is rate limiting requests; open the sub-agent again in a moment.",
            )
            .with_status(429));
        }
        Ok(resp)
    }
}

async fn read_to_tail(
    mut resp: reqwest::Response,
    path: String,
    from: &ChildCursor,
    limits: ChildLimits,
    deadline: tokio::time::Instant,
) -> Result<ChildRead> {
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    // The newest line when asked: reading stops once it is in.
    let tail: Option<i64> = header("x-eve-stream-tail-index").and_then(|v| v.trim().parse().ok());
    let ct = header(reqwest::header::CONTENT_TYPE.as_str()).unwrap_or_default();
    let version = header("x-eve-stream-version");
    let Some(mut framing) = Framing::for_response(&ct, version.as_deref())? else {
        return Err(Error::new(
            ErrorCode::Protocol,
            format!("The sub-agent's stream answered {ct:?}, not text/event-stream or NDJSON."),
        ));
    };
    let mut out = ChildRead {
        events: Vec::new(),
        cursor: from.clone(),
        cut_short: false,
        finished: resp.status().as_u16() == 204,
        path,
    };
    let caught_up = |c: &ChildCursor| tail.is_some_and(|t| c.next as i64 > t);
    if out.finished || caught_up(&out.cursor) {
        return Ok(out);
    }
    let mut bytes = 0usize;
    let mut batch = Vec::new();
    let mut line = Vec::new();
    loop {
        let now = tokio::time::Instant::now();
        if now >= deadline {
            out.cut_short = true;
            return Ok(out);
        }
        // Without a tail index, the stream stands where nothing more comes for a moment.
        let wait = if tail.is_none() && !out.events.is_empty() {
            SETTLE.min(deadline - now)
        } else {
            deadline - now
        };
        let chunk = match tokio::time::timeout(wait, resp.chunk()).await {
            Err(_) => {
                out.cut_short = tail.is_some();
                return Ok(out);
            }
            Ok(Err(e)) => return Err(network_error(e)),
            // Cut inside a record, however cleanly the body ended (a `Content-Length`
            // shorter than the record): what came whole is kept and the next opening
            // reads on; a cut before any whole record is said, not shown as "nothing
            // written yet", and never asked again by itself.
            Ok(Ok(None)) if framing.mid_record() => {
                if out.events.is_empty() {
                    return Err(Error::new(
                        ErrorCode::Network,
                        format!(
                            "The service ended the sub-agent's stream before a whole record (after {bytes} bytes), so nothing new was read. Refresh to try again."
                        ),
                    ));
                }
                out.cut_short = true;
                return Ok(out);
            }
            Ok(Ok(None)) => {
                out.cut_short = tail.is_some() && !caught_up(&out.cursor);
                return Ok(out);
            }
            Ok(Ok(Some(chunk))) => chunk,
        };
        bytes += chunk.len();
        let fed = framing.feed(&chunk, &mut batch);
        for framed in batch.drain(..) {
            match framed {
                Framed::Event { event, resume } => {
                    if let Some(id) = resume {
                        out.cursor.last_event_id = Some(id).filter(|id| !id.is_empty());
                    }
                    if framing.is_ndjson() {
                        line.push(event);
                    } else {
                        out.events.push(event);
                    }
                }
                // A line's events are kept only once it is whole, so the cursor and the
                // records stay in step however the reading stops.
                Framed::LineEnd => {
                    out.events.append(&mut line);
                    out.cursor.next += 1;
                }
                Framed::Transport(Transport::Position(next)) => out.cursor.next = next,
                Framed::Transport(Transport::Ended) => {
                    out.finished = true;
                    return Ok(out);
                }
                Framed::Transport(Transport::LeaseEnded) => {
                    out.cut_short = tail.is_some() && !caught_up(&out.cursor);
                    return Ok(out);
                }
                Framed::Transport(_) => {}
            }
            if out.events.len() >= limits.records {
                out.cut_short = true;
                return Ok(out);
            }
        }
        fed?;
        if caught_up(&out.cursor) {
            return Ok(out);
        }
        if bytes >= limits.bytes {
            out.cut_short = true;
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::ApiKey;
    use crate::net::connection::Connection;

    fn client(base: &str) -> InvestigationClient {
        InvestigationClient::new(
            Connection::new("http://127.0.0.1:9").unwrap(),
            ApiKey::parse("sk-test-0123456789abcdef").unwrap(),
        )
        .at_base(base)
    }

    fn child(stream: Option<&str>) -> ChildRef {
        ChildRef {
            call_id: "call 1".into(),
            session_id: "ses/2".into(),
            stream_path: stream.map(str::to_owned),
        }
    }

    #[test]
    fn the_parent_route_encodes_each_id_as_one_segment_under_the_base() {
        let c = client("/eve/agents/research/eve/v1");
        assert_eq!(
            c.child_route("ses_1", &child(None)).unwrap(),
            "/eve/agents/research/eve/v1/session/ses_1/subagents/call%201/ses%2F2/stream"
        );
        assert!(c.child_route("..", &child(None)).is_err());
    }

    #[test]
    fn the_records_stream_path_is_followed_only_under_the_api_base() {
        let c = client("/eve/research/v1");
        let own = |p: &str| c.child_own_path(&child(Some(p)));
        // eve writes its own /eve/v1: rebased onto the mission's base.
        assert_eq!(
            own("/eve/v1/session/ses_2/stream").as_deref(),
            Some("/eve/research/v1/session/ses_2/stream")
        );
        assert_eq!(
            own("/eve/research/v1/session/ses_2/stream").as_deref(),
            Some("/eve/research/v1/session/ses_2/stream")
        );
        for refused in [
            "https://elsewhere.example/eve/v1/session/ses_2/stream",
            "//elsewhere.example/eve/v1/session/x/stream",
            "/eve/v1/session/../../admin",
            "/eve/v1/session/ses_2/stream?token=1",
            "/other/v1/session/ses_2/stream",
            "/eve/v1x/session/ses_2/stream",
        ] {
            assert_eq!(own(refused), None, "{refused}");
        }
        assert_eq!(c.child_own_path(&child(None)), None);
    }
}
