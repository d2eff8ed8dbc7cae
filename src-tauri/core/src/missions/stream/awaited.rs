//! The replies a watch follows past the end of the turn that was running when they were
//! sent, until the turn that takes each one shows.

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// How long a turn's end waits for an awaited reply's delivery to show: eve starts the
/// turn that takes a queued message at once, and a server that never names deliveries
/// must not keep a watch open on a session that waits.
pub const AWAIT_GRACE: Duration = Duration::from_secs(15);
/// Deliveries remembered as taken: a reply's delivery may show before its sender hears
/// the service's answer.
const TAKEN_KEPT: usize = 64;

/// The replies a watch follows to their turn ([`super::WatchOptions::awaited`]): by the delivery
/// id eve gave for each, or, from an eve that gives none (generation A), by its words,
/// which the turn that takes it repeats.
#[derive(Debug, Clone, Default)]
pub struct Awaited(Arc<Mutex<AwaitedState>>);

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reply {
    Delivery(String),
    Words(String),
}

#[derive(Debug, Default)]
struct AwaitedState {
    waiting: BTreeSet<Reply>,
    taken: VecDeque<String>,
    /// The watch has ended and takes no more.
    closed: bool,
}

impl Awaited {
    fn state(&self) -> MutexGuard<'_, AwaitedState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Follows `reply` to its turn; false once the watch has closed.
    pub fn add(&self, reply: Reply) -> bool {
        let mut s = self.state();
        if s.closed {
            return false;
        }
        let seen = matches!(&reply, Reply::Delivery(id) if s.taken.contains(id));
        if !seen {
            s.waiting.insert(reply);
        }
        true
    }

    /// The stream showed these deliveries taken.
    pub fn taken(&self, ids: &[String]) {
        let mut s = self.state();
        for id in ids {
            s.waiting.remove(&Reply::Delivery(id.clone()));
            if !s.taken.contains(id) {
                if s.taken.len() == TAKEN_KEPT {
                    s.taken.pop_front();
                }
                s.taken.push_back(id.clone());
            }
        }
    }

    /// The stream showed the person's message with these words.
    pub fn said(&self, words: &str) {
        let mut s = self.state();
        if !s.waiting.is_empty() {
            s.waiting.remove(&Reply::Words(words.to_owned()));
        }
    }

    /// A reply sent has not shown yet.
    pub fn pending(&self) -> bool {
        !self.state().waiting.is_empty()
    }

    /// The awaited replies never showed: the watch stops waiting for them.
    pub fn give_up(&self) {
        self.state().waiting.clear();
    }

    /// Closes it when nothing is awaited (the watch may end); false while a reply is.
    pub fn close_if_idle(&self) -> bool {
        let mut s = self.state();
        s.closed = s.waiting.is_empty();
        s.closed
    }

    /// The watch ends, whatever it still awaited: a reply sent from now on starts another.
    pub fn close(&self) {
        let mut s = self.state();
        s.waiting.clear();
        s.closed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_is_awaited_until_its_delivery_or_its_words_show() {
        let a = Awaited::default();
        assert!(!a.pending());
        assert!(a.add(Reply::Delivery("d1".into())));
        assert!(a.add(Reply::Words("And in Europe?".into())));
        a.taken(&["d0".into(), "d1".into()]);
        assert!(a.pending(), "the words have not shown");
        a.said("And in Europe?");
        assert!(!a.pending());
        // A delivery that showed before its sender heard the 202 is not awaited again.
        assert!(a.add(Reply::Delivery("d0".into())));
        assert!(!a.pending());
        // Closed only when nothing is awaited; then it takes no more.
        assert!(a.add(Reply::Delivery("d9".into())));
        assert!(!a.close_if_idle());
        a.give_up();
        assert!(a.close_if_idle());
        assert!(!a.add(Reply::Delivery("d10".into())));
        let b = Awaited::default();
        b.add(Reply::Words("Still waiting".into()));
        b.close();
        assert!(!b.pending() && !b.add(Reply::Delivery("d11".into())));
    }
}
