//! A per-key token bucket: the sandbox's answer to "rate limiting applies to
//! repeated calls" (thresholds not shown in the contract).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct RateLimit {
    /// Requests a key may make per minute, sustained (0: unlimited).
    pub per_minute: u32,
    /// Requests a key may make at once before the rate applies.
    pub burst: u32,
}

impl Default for RateLimit {
    fn default() -> Self {
        Self {
            per_minute: 120,
            burst: 30,
        }
    }
}

pub struct Limiter {
    limit: RateLimit,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl Limiter {
    pub fn new(limit: RateLimit) -> Self {
        Self {
            limit,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// `Ok` when `key` may make a request now, else how long until it may.
    pub fn check(&self, key: &str) -> Result<(), Duration> {
        if self.limit.per_minute == 0 {
            return Ok(());
        }
        let rate = self.limit.per_minute as f64 / 60.0;
        let burst = self.limit.burst.max(1) as f64;
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap();
        let (tokens, last) = buckets.entry(key.to_owned()).or_insert((burst, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * rate).min(burst);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *tokens) / rate))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_wait() {
        // One token a minute: the wait is about a minute less the time the three
        // checks took, which on a loaded machine is not a few ms but never half of that.
        let l = Limiter::new(RateLimit {
            per_minute: 1,
            burst: 2,
        });
        assert!(l.check("a").is_ok());
        assert!(l.check("a").is_ok());
        let wait = l.check("a").unwrap_err();
        assert!(
            wait > Duration::from_secs(30) && wait <= Duration::from_secs(60),
            "{wait:?}"
        );
        assert!(l.check("b").is_ok(), "keys have their own buckets");
    }
}
