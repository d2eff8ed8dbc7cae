//! The investigation service and a mission's life in Casebook: the client and the
//! typed events ([`client`]), the stream's wire ([`protocol`]) and following it
//! across drops ([`stream`]), the history on disk ([`store`]), one watcher per mission
//! shared by every window ([`follower`]), how an event reads ([`cards`]), the conversation the
//! records make ([`conversation`], its Markdown as HTML in [`markdown`]), and exports
//! ([`transcript`], the report as a Word document in [`report_docx`]); a delegated
//! sub-agent's own conversation, read only when opened ([`subagents`]).

pub mod agent;
pub mod attachment;
pub mod budget;
pub mod cards;
pub mod client;
pub mod conversation;
pub mod conversation_store;
pub mod follower;
pub mod lifecycle;
pub mod markdown;
pub mod protocol;
pub mod report_docx;
pub mod store;
pub mod stream;
pub mod subagents;
pub mod transcript;
