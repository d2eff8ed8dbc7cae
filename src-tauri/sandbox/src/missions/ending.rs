//! How a stream response ends, the same for the SSE stream and eve's: what is queued goes
//! first; then a clean end, or, for the cut faults, an abort once the queued bytes (a part
//! of a frame, say) have had time to reach the client.

use bytes::Bytes;
use std::collections::VecDeque;
use std::time::Duration;

/// A cut connection lingers this long first, so the events it did send are flushed
/// to the client before the connection is reset.
const CUT_AFTER: Duration = Duration::from_millis(20);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    No,
    /// Finish the response normally once the queue is empty.
    Clean,
    /// A cut fault: abort the connection mid-response once the queue is empty.
    Cut,
}

/// One body item, when the queue or the ending decides it: `Some(Some(item))` to send,
/// `Some(None)` to finish, `None` while the stream should go on producing.
pub(crate) async fn queued_or_end(
    pending: &mut VecDeque<Bytes>,
    end: &mut End,
) -> Option<Option<Result<Bytes, std::io::Error>>> {
    if let Some(chunk) = pending.pop_front() {
        return Some(Some(Ok(chunk)));
    }
    match *end {
        End::No => None,
        End::Clean => Some(None),
        End::Cut => {
            tokio::time::sleep(CUT_AFTER).await;
            *end = End::Clean;
            Some(Some(Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "injected fault: event stream dropped",
            ))))
        }
    }
}
