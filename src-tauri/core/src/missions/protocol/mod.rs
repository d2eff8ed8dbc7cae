//! The investigation service's wire: how a stream's bytes are framed (the seeds' SSE in
//! [`sse`], eve's NDJSON in its generations in [`ndjson`]).

pub mod ndjson;
pub mod sse;
