//! The citation service and what Casebook does around it: recognising a dropped file
//! ([`documents`]), reading a .docx or .pptx itself ([`reader`]), the parse and cite
//! client ([`client`]) with the document streamed both ways ([`transfer`]), what a
//! returned document must pass before it is saved ([`returned`]), what a card says
//! before citing ([`preview`]), what a cite changed ([`summary`]), and the
//! citing jobs the front ends run ([`jobs`]).

pub mod batch;
pub mod client;
pub mod documents;
pub mod jobs;
pub mod preview;
pub mod reader;
pub mod returned;
pub mod review;
pub mod summary;
pub mod transfer;
