//! How Casebook talks to either service: one pooled connection per base URL
//! ([`connection`]), answers turned into typed errors with the 429 retry loop
//! ([`http`]), and the authenticated JSON POST both clients build on ([`api`]).
//! Nothing here knows what a document or a mission is.

pub(crate) mod api;
pub mod connection;
pub mod http;
