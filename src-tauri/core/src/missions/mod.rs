//! The investigation service and a mission's life in Casebook: the client and the
//! typed events ([`client`]), the stream's wire ([`protocol`]) and following it
//! across drops ([`stream`]), the history on disk ([`store`]), one watcher per mission
//! shared by every window ([`follower`]), where a mission stands ([`lifecycle`]) and what
//! it spent ([`spend`]), the conversation the records make ([`conversation`]: how an
//! event reads, its Markdown as HTML), and exports ([`export`]: the transcript, the report
//! as a Word document); a delegated sub-agent's own conversation, read only when opened
//! ([`subagents`]).

pub mod client;
pub mod conversation;
pub mod export;
pub mod follower;
pub mod lifecycle;
pub mod protocol;
pub mod spend;
pub mod store;
pub mod stream;
pub mod subagents;
