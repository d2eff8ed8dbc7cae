//! The `missions` table: one row a mission, with its status, its stream's cursor and the
//! API base and release it was started on.

use super::*;

/// The count of a mission's records is its last position: positions are given from 1
/// without a gap and a record is never taken out alone. Counted, a list of a thousand
/// missions read every record's key (0.5 s at 5.5 million records, each start of the app).
const SELECT_MISSION: &str =
    "SELECT m.session_id, m.objective, m.mission_type, m.budget_type, m.budget_cents,
    m.base_url, m.status, m.created_at, m.updated_at, m.last_event_id,
    (SELECT COALESCE(MAX(seq), 0) FROM events e WHERE e.session_id = m.session_id),
    m.continuation_token,
    m.api_base
    FROM missions m";

fn row_to_mission(r: &rusqlite::Row<'_>) -> rusqlite::Result<MissionRecord> {
    Ok(MissionRecord {
        session_id: r.get(0)?,
        objective: r.get(1)?,
        mission_type: r.get(2)?,
        budget_type: r.get(3)?,
        budget_cents: r.get::<_, i64>(4)? as u64,
        base_url: r.get(5)?,
        status: MissionStatus::parse(&r.get::<_, String>(6)?),
        created_at: r.get(7)?,
        updated_at: r.get(8)?,
        last_event_id: r.get(9)?,
        event_count: r.get::<_, i64>(10)? as u64,
        continuation_token: r.get(11)?,
        api_base: r
            .get::<_, Option<String>>(12)?
            .unwrap_or_else(|| crate::missions::client::agent::DEFAULT_API_BASE.to_owned()),
    })
}

fn get(c: &Connection, id: &str) -> Result<Option<MissionRecord>> {
    c.query_row(
        &format!("{SELECT_MISSION} WHERE m.session_id = ?1"),
        [id],
        row_to_mission,
    )
    .optional()
    .map_err(db_err)
}

impl MissionStore {
    /// Records a mission that has just started.
    pub async fn insert(
        &self,
        session: &Session,
        spec: &MissionSpec,
        base_url: &str,
    ) -> Result<MissionRecord> {
        self.insert_at(
            session,
            spec,
            base_url,
            crate::missions::client::agent::DEFAULT_API_BASE,
        )
        .await
    }

    /// [`Self::insert`] for a mission started under the API base `api_base`.
    pub async fn insert_at(
        &self,
        session: &Session,
        spec: &MissionSpec,
        base_url: &str,
        api_base: &str,
    ) -> Result<MissionRecord> {
        let (session, spec, base_url) = (session.clone(), spec.clone(), base_url.to_owned());
        let api_base = api_base.to_owned();
        self.with(move |c| {
            let now = now_ms();
            c.execute(
                "INSERT INTO missions (session_id, continuation_token, objective, mission_type, budget_type,
                   budget_cents, base_url, status, created_at, updated_at, api_base)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running', ?8, ?8, ?9)
                 ON CONFLICT(session_id) DO NOTHING",
                params![
                    session.session_id,
                    session.continuation_token,
                    spec.objective.trim(),
                    spec.mission_type,
                    spec.budget_type,
                    spec.budget_cents as i64,
                    base_url,
                    now,
                    api_base
                ],
            )
            .map_err(db_err)?;
            get(c, &session.session_id)?.ok_or_else(|| Error::internal("The mission was not saved."))
        })
        .await
    }

    /// The eve stream version the mission's stream named this time.
    pub async fn set_stream_version(&self, session_id: &str, version: u32) -> Result<()> {
        let id = session_id.to_owned();
        self.with(move |c| {
            c.execute(
                "UPDATE missions SET stream_version = ?2 WHERE session_id = ?1",
                params![id, version],
            )
            .map(|_| ())
            .map_err(db_err)
        })
        .await
    }

    /// The eve stream version the mission's stream last named, if it named one.
    pub async fn stream_version(&self, session_id: &str) -> Result<Option<u32>> {
        let id = session_id.to_owned();
        self.with(move |c| {
            c.query_row(
                "SELECT stream_version FROM missions WHERE session_id = ?1",
                [&id],
                |r| r.get::<_, Option<u32>>(0),
            )
            .optional()
            .map(Option::flatten)
            .map_err(db_err)
        })
        .await
    }

    /// The mission is of eve's token generation (its stream named version 20 or below):
    /// from now on it keeps the newest token a waiting session hands out.
    pub async fn accept_tokens(&self, session_id: &str) -> Result<()> {
        let id = session_id.to_owned();
        self.with(move |c| {
            c.execute(
                "UPDATE missions SET continuation_token = '' WHERE session_id = ?1 AND continuation_token IS NULL",
                [&id],
            )
            .map(|_| ())
            .map_err(db_err)
        })
        .await
    }

    /// Records a mission started elsewhere (another computer, a script), known only
    /// by its id, to be followed after `last_event_id`.
    pub async fn adopt(
        &self,
        session_id: &str,
        base_url: &str,
        last_event_id: Option<String>,
    ) -> Result<()> {
        let base = crate::missions::client::agent::DEFAULT_API_BASE;
        self.adopt_at(session_id, base_url, base, last_event_id)
            .await
    }

    /// [`Self::adopt`] for a session under the API base `api_base`.
    pub async fn adopt_at(
        &self,
        session_id: &str,
        base_url: &str,
        api_base: &str,
        last_event_id: Option<String>,
    ) -> Result<()> {
        let (id, base_url) = (session_id.to_owned(), base_url.to_owned());
        let api_base = api_base.to_owned();
        self.with(move |c| {
            let now = now_ms();
            c.execute(
                "INSERT INTO missions (session_id, objective, mission_type, budget_type, budget_cents,
                   base_url, status, created_at, updated_at, last_event_id, api_base)
                 VALUES (?1, ?2, '', '', 0, ?3, 'running', ?4, ?4, ?5, ?6)
                 ON CONFLICT(session_id) DO NOTHING",
                params![id, format!("Mission {id} (started elsewhere)"), base_url, now, last_event_id, api_base],
            )
            .map(|_| ())
            .map_err(db_err)
        })
        .await
    }

    pub async fn get(&self, session_id: &str) -> Result<Option<MissionRecord>> {
        let id = session_id.to_owned();
        self.with(move |c| get(c, &id)).await
    }

    /// The mission, or the one "not found" every front end shows.
    pub async fn require(&self, session_id: &str) -> Result<MissionRecord> {
        self.get(session_id)
            .await?
            .ok_or_else(|| not_found(session_id))
    }

    /// Newest first.
    pub async fn list(&self) -> Result<Vec<MissionRecord>> {
        self.with(|c| {
            let mut stmt = c
                .prepare(&format!("{SELECT_MISSION} ORDER BY m.created_at DESC"))
                .map_err(db_err)?;
            let rows = stmt.query_map([], row_to_mission).map_err(db_err)?;
            rows.collect::<std::result::Result<Vec<_>, _>>()
                .map_err(db_err)
        })
        .await
    }

    /// Missions that were being followed when the app stopped.
    pub async fn live(&self) -> Result<Vec<MissionRecord>> {
        Ok(self
            .list()
            .await?
            .into_iter()
            .filter(|m| m.status.is_live())
            .collect())
    }

    pub async fn set_status(&self, session_id: &str, status: MissionStatus) -> Result<()> {
        let id = session_id.to_owned();
        self.with(move |c| {
            c.execute(
                "UPDATE missions SET status = ?2, updated_at = ?3 WHERE session_id = ?1",
                params![id, status.as_str(), now_ms()],
            )
            .map(|_| ())
            .map_err(db_err)
        })
        .await
    }
}
