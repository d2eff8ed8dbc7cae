//! Money and spend: amounts in US dollars as Casebook reads and writes them, and spend
//! against the mission's hard budget (the amount its first message names): what every
//! front end says of it, and when it warns.
//!
//! The spend itself is the conversation's ([`crate::missions::conversation::Conversation::spent_usd`]):
//! eve B's newest cumulative `usage` (which counts the agents it delegated to) plus the
//! steps since; eve 27's sum of every `usage.recorded`.

use crate::error::{Error, Result};
use serde::Serialize;
use ts_rs::TS;

/// `2500` → `"25.00"`.
pub fn format_usd(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// `"25"`, `"25.5"`, `"$25.50"` → cents. Refuses more than two decimals and zero.
pub fn parse_usd(raw: &str) -> Result<u64> {
    let s = raw.trim().trim_start_matches('$').trim();
    let bad = || {
        Error::invalid_input(format!(
            "\"{raw}\" is not an amount in US dollars (like 25 or 25.50)."
        ))
    };
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if whole.is_empty() && frac.is_empty() {
        return Err(bad());
    }
    if !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > 2
    {
        return Err(bad());
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let frac: u64 = format!("{frac:0<2}").parse().map_err(|_| bad())?;
    let cents = whole
        .checked_mul(100)
        .and_then(|w| w.checked_add(frac))
        .ok_or_else(bad)?;
    if cents == 0 {
        return Err(Error::invalid_input("The budget must be more than $0.00."));
    }
    Ok(cents)
}

/// `0.5` → `"$0.50"`; amounts arrive as JSON numbers of dollars.
pub fn dollars(v: f64) -> String {
    if !v.is_finite() || v < 0.0 {
        return format!("${v}");
    }
    format!("${}", format_usd((v * 100.0).round() as u64))
}

/// From this share of the budget (percent), the spend is a warning.
pub const WARN_PERCENT: f64 = 80.0;

/// How the spend stands against the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum BudgetLevel {
    Ok,
    /// Past [`WARN_PERCENT`].
    Warning,
    /// Past the budget itself.
    Exceeded,
}

/// The spend against the budget, as the window's header and `mission show` say it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct BudgetUse {
    pub spent_usd: f64,
    pub budget_usd: f64,
    /// Whole percent, rounded down (so 79.9% does not read as 80%).
    pub percent: u32,
    pub level: BudgetLevel,
    /// "$4.10 of $5.00 — 82% of the budget", and "… over the budget by $0.40" past it.
    pub text: String,
}

impl BudgetUse {
    /// `None` without a spend or a budget (a mission adopted by its id has none).
    pub fn of(spent_usd: Option<f64>, budget_cents: u64) -> Option<Self> {
        let spent = spent_usd.filter(|s| s.is_finite() && *s >= 0.0)?;
        if budget_cents == 0 {
            return None;
        }
        let budget = budget_cents as f64 / 100.0;
        // Compared in whole cents, as they are shown: $5.00 of $5.00 is not over.
        let spent_cents = (spent * 100.0).round();
        let ratio = spent_cents / budget_cents as f64 * 100.0;
        let percent = ratio.floor().min(u32::MAX as f64) as u32;
        let level = if spent_cents > budget_cents as f64 {
            BudgetLevel::Exceeded
        } else if ratio > WARN_PERCENT {
            BudgetLevel::Warning
        } else {
            BudgetLevel::Ok
        };
        let head = format!("{} of {}", dollars(spent), dollars(budget));
        let text = match level {
            BudgetLevel::Exceeded => format!(
                "{head} — over the budget by {} ({percent}%)",
                dollars((spent_cents - budget_cents as f64) / 100.0)
            ),
            _ => format!("{head} — {percent}% of the budget"),
        };
        Some(Self {
            spent_usd: spent,
            budget_usd: budget,
            percent,
            level,
            text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_parse_to_cents_and_read_back() {
        for (raw, cents) in [
            ("25", 2500),
            ("25.5", 2550),
            ("$25.50", 2550),
            (" 0.01 ", 1),
            (".5", 50),
        ] {
            assert_eq!(parse_usd(raw).unwrap(), cents, "{raw}");
        }
        for raw in ["", "0", "0.00", "-5", "1.234", "abc", "1,000", "$"] {
            assert!(parse_usd(raw).is_err(), "{raw}");
        }
        assert_eq!(format_usd(2550), "25.50");
        assert_eq!(format_usd(7), "0.07");
        assert_eq!(dollars(25.5), "$25.50");
        assert_eq!(dollars(0.125), "$0.13");
    }

    #[test]
    fn past_80_percent_warns_and_past_the_budget_says_so_plainly() {
        let at = |usd: f64| BudgetUse::of(Some(usd), 500).unwrap();
        assert_eq!(at(1.0).level, BudgetLevel::Ok);
        assert_eq!(at(4.0).level, BudgetLevel::Ok, "80% exactly is not past it");
        let w = at(4.1);
        assert_eq!(w.level, BudgetLevel::Warning);
        assert_eq!(w.text, "$4.10 of $5.00 — 82% of the budget");
        assert_eq!(at(5.0).level, BudgetLevel::Warning, "all of it, not over");
        assert_eq!(at(5.004).level, BudgetLevel::Warning, "as shown: $5.00");
        let x = at(5.4);
        assert_eq!(x.level, BudgetLevel::Exceeded);
        assert_eq!(x.text, "$5.40 of $5.00 — over the budget by $0.40 (108%)");
        assert_eq!(at(3.999).percent, 80);
        assert_eq!(at(3.994).percent, 79, "rounded down, never up to a warning");
        assert!(BudgetUse::of(None, 500).is_none());
        assert!(BudgetUse::of(Some(1.0), 0).is_none());
        assert!(BudgetUse::of(Some(f64::NAN), 500).is_none());
    }
}
