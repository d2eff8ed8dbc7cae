//! The mission message: four labelled lines in a fixed order, then the objective.
//!
//! ```text
//! MISSION TYPE: research
//! MISSION BUDGET TYPE: fixed
//! MISSION BUDGET (hard maximum): $25.00 USD
//! MISSION OBJECTIVE:
//!
//! <objective, one or more lines>
//! ```
//!
//! The sandbox is deliberately strict (see `docs/contract.md`): a client that passes
//! here sends what the seed describes, so it cannot come to depend on leniency a real
//! server may not have. The only slack is what an editor adds without anyone seeing
//! it: CRLF line ends and trailing spaces, and the blank line before the objective,
//! which the seed asks for but some writers leave out.

/// A mission read from a valid message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mission {
    pub mission_type: String,
    pub budget_type: String,
    /// The hard maximum, in US cents: integers, so "strictly below budget" is exact.
    pub budget_cents: u64,
    pub objective: String,
}

/// Why a message was refused: the 1-based line and what that line should have been.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageError {
    pub line: usize,
    pub expected: &'static str,
    pub message: String,
}

const TYPE: &str = "MISSION TYPE:";
const BUDGET_TYPE: &str = "MISSION BUDGET TYPE:";
const BUDGET: &str = "MISSION BUDGET (hard maximum):";
const OBJECTIVE: &str = "MISSION OBJECTIVE:";

const EXPECT_TYPE: &str = "MISSION TYPE: <word>";
const EXPECT_BUDGET_TYPE: &str = "MISSION BUDGET TYPE: <word>";
const EXPECT_BUDGET: &str = "MISSION BUDGET (hard maximum): $<amount> USD";
const EXPECT_OBJECTIVE_LABEL: &str = "MISSION OBJECTIVE:";
const EXPECT_OBJECTIVE: &str = "the objective";

/// The longest type or budget-type word accepted.
const MAX_WORD: usize = 64;
/// Whole dollars: nine digits keeps cents far from overflowing anything.
const MAX_DOLLAR_DIGITS: usize = 9;

pub fn parse(message: &str) -> Result<Mission, MessageError> {
    let lines: Vec<&str> = message
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();

    let mission_type = word(&lines, 1, TYPE, EXPECT_TYPE)?;
    let budget_type = word(&lines, 2, BUDGET_TYPE, EXPECT_BUDGET_TYPE)?;
    let budget_cents = budget(&lines)?;

    let label = line_at(&lines, 4, EXPECT_OBJECTIVE_LABEL)?;
    if label != OBJECTIVE {
        let message = if label.starts_with(OBJECTIVE) {
            format!(
                "Line 4: expected \"{OBJECTIVE}\" alone on its line, with the objective on the next line; found {}.",
                quoted(label)
            )
        } else {
            found(4, EXPECT_OBJECTIVE_LABEL, label)
        };
        return Err(MessageError {
            line: 4,
            expected: EXPECT_OBJECTIVE_LABEL,
            message,
        });
    }

    let mut start = 5;
    let first = lines.get(start - 1).map(|l| l.trim());
    match first {
        None => return Err(ends(start, EXPECT_OBJECTIVE)),
        Some("") => {
            start = 6;
            match lines.get(start - 1).map(|l| l.trim()) {
                None => return Err(ends(start, EXPECT_OBJECTIVE)),
                Some("") => {
                    // Only trailing blank lines after the single allowed one means no objective.
                    let message = if lines[start - 1..].iter().all(|l| l.trim().is_empty()) {
                        "Line 6: expected the objective; the message has none.".to_owned()
                    } else {
                        "Line 6: expected the objective; at most one blank line may come before it."
                            .to_owned()
                    };
                    return Err(MessageError {
                        line: 6,
                        expected: EXPECT_OBJECTIVE,
                        message,
                    });
                }
                Some(_) => {}
            }
        }
        Some(_) => {}
    }
    let objective = lines[start - 1..].join("\n").trim().to_owned();

    Ok(Mission {
        mission_type,
        budget_type,
        budget_cents,
        objective,
    })
}

/// Line `n` without trailing whitespace, or the error for a message that ends before it.
fn line_at<'a>(
    lines: &[&'a str],
    n: usize,
    expected: &'static str,
) -> Result<&'a str, MessageError> {
    // `split` yields one empty piece after a final newline; that is not a line.
    let last_is_phantom = lines.last().is_some_and(|l| l.is_empty()) && lines.len() > 1;
    let count = lines.len() - usize::from(last_is_phantom);
    if n > count {
        return Err(ends(n, expected));
    }
    Ok(lines[n - 1].trim_end())
}

fn word(
    lines: &[&str],
    n: usize,
    label: &str,
    expected: &'static str,
) -> Result<String, MessageError> {
    let line = line_at(lines, n, expected)?;
    let bad = |message: String| MessageError {
        line: n,
        expected,
        message,
    };
    let Some(rest) = line.strip_prefix(label) else {
        return Err(bad(found(n, expected, line)));
    };
    let Some(value) = rest.strip_prefix(' ') else {
        return Err(bad(format!(
            "Line {n}: expected \"{expected}\" with one space after the colon; found {}.",
            quoted(line)
        )));
    };
    let is_word = value.len() <= MAX_WORD
        && value
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !is_word {
        return Err(bad(format!(
            "Line {n}: expected \"{expected}\", where <word> is one word of letters, digits, '_' or '-' (at most {MAX_WORD}); found {}.",
            quoted(line)
        )));
    }
    Ok(value.to_owned())
}

fn budget(lines: &[&str]) -> Result<u64, MessageError> {
    let n = 3;
    let line = line_at(lines, n, EXPECT_BUDGET)?;
    let bad = |message: String| MessageError {
        line: n,
        expected: EXPECT_BUDGET,
        message,
    };
    let amount = line
        .strip_prefix(BUDGET)
        .and_then(|r| r.strip_prefix(" $"))
        .and_then(|r| r.strip_suffix(" USD"));
    let Some(amount) = amount else {
        return Err(bad(found(n, EXPECT_BUDGET, line)));
    };
    let (whole, frac) = match amount.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (amount, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let well_formed = digits(whole)
        && whole.len() <= MAX_DOLLAR_DIGITS
        && frac.is_none_or(|f| digits(f) && f.len() <= 2);
    if !well_formed {
        return Err(bad(format!(
            "Line {n}: expected \"{EXPECT_BUDGET}\", where <amount> is dollars with at most two decimals (e.g. 25.00 or 7), up to {MAX_DOLLAR_DIGITS} digits before the point; found {}.",
            quoted(line)
        )));
    }
    let dollars: u64 = whole.parse().unwrap_or(0);
    let cents: u64 = match frac {
        None => 0,
        Some(f) if f.len() == 1 => f.parse::<u64>().unwrap_or(0) * 10,
        Some(f) => f.parse().unwrap_or(0),
    };
    let total = dollars * 100 + cents;
    if total == 0 {
        return Err(bad(format!(
            "Line {n}: expected a positive budget; found {}.",
            quoted(line)
        )));
    }
    Ok(total)
}

fn ends(n: usize, expected: &'static str) -> MessageError {
    let what = if expected == EXPECT_OBJECTIVE {
        "expected the objective".to_owned()
    } else {
        format!("expected \"{expected}\"")
    };
    MessageError {
        line: n,
        expected,
        message: format!("Line {n}: {what}; the message ends before it."),
    }
}

fn found(n: usize, expected: &str, line: &str) -> String {
    format!("Line {n}: expected \"{expected}\"; found {}.", quoted(line))
}

/// The offending line as JSON-ish quoted text, cut short so an error never echoes a
/// whole pasted document back.
fn quoted(line: &str) -> String {
    const MAX: usize = 80;
    if line.is_empty() {
        return "an empty line".to_owned();
    }
    let mut cut: String = line.chars().take(MAX).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    format!("{cut:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "MISSION TYPE: research\nMISSION BUDGET TYPE: fixed\nMISSION BUDGET (hard maximum): $25.00 USD\nMISSION OBJECTIVE:\n\nHow does urban heat affect hospital admissions?";

    fn with_line(n: usize, replacement: &str) -> String {
        GOOD.split('\n')
            .enumerate()
            .map(|(i, l)| if i + 1 == n { replacement } else { l })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn line_of(message: &str) -> usize {
        match parse(message) {
            Ok(m) => panic!("accepted {message:?} as {m:?}"),
            Err(e) => e.line,
        }
    }

    #[test]
    fn accepts_the_contract_example() {
        let m = parse(GOOD).unwrap();
        assert_eq!(m.mission_type, "research");
        assert_eq!(m.budget_type, "fixed");
        assert_eq!(m.budget_cents, 2500);
        assert_eq!(
            m.objective,
            "How does urban heat affect hospital admissions?"
        );
    }

    #[test]
    fn objective_may_follow_without_the_blank_line() {
        let m = parse(&GOOD.replace("OBJECTIVE:\n\n", "OBJECTIVE:\n")).unwrap();
        assert_eq!(
            m.objective,
            "How does urban heat affect hospital admissions?"
        );
    }

    #[test]
    fn objective_keeps_its_lines_and_is_trimmed() {
        let msg = format!("{GOOD}\nSecond line.\n\n  Third after a gap.  \n\n");
        let m = parse(&msg).unwrap();
        assert_eq!(
            m.objective,
            "How does urban heat affect hospital admissions?\nSecond line.\n\n  Third after a gap."
        );
    }

    #[test]
    fn crlf_and_trailing_spaces_are_tolerated() {
        let msg = GOOD.replace('\n', "  \r\n");
        let m = parse(&msg).unwrap();
        assert_eq!(m.budget_cents, 2500);
        assert_eq!(
            m.objective,
            "How does urban heat affect hospital admissions?"
        );
    }

    #[test]
    fn any_single_word_type_is_accepted() {
        let m = parse(&with_line(1, "MISSION TYPE: due-diligence_2")).unwrap();
        assert_eq!(m.mission_type, "due-diligence_2");
        let m = parse(&with_line(2, "MISSION BUDGET TYPE: capped")).unwrap();
        assert_eq!(m.budget_type, "capped");
    }

    #[test]
    fn budget_amounts_become_cents() {
        for (amount, cents) in [
            ("$7", 700),
            ("$7.5", 750),
            ("$7.05", 705),
            ("$0.01", 1),
            ("$0007.10", 710),
            ("$999999999.99", 99_999_999_999),
        ] {
            let msg = with_line(3, &format!("MISSION BUDGET (hard maximum): {amount} USD"));
            assert_eq!(parse(&msg).unwrap().budget_cents, cents, "{amount}");
        }
    }

    #[test]
    fn malformed_budgets_name_line_3() {
        for rest in [
            "$0 USD",
            "$0.00 USD",
            "$-5 USD",
            "$1.234 USD",
            "$.50 USD",
            "$5. USD",
            "$1,000 USD",
            "$ 25 USD",
            "$1e3 USD",
            "$1234567890 USD",
            "$twenty USD",
            "25.00 USD",
            "$25.00",
            "$25.00 usd",
            "$25.00 EUR",
            "$25.00 USD extra",
            "$25.00  USD",
            " $25.00 USD",
        ] {
            let msg = with_line(3, &format!("MISSION BUDGET (hard maximum): {rest}"));
            let err = parse(&msg).expect_err(&msg);
            assert_eq!(err.line, 3, "{rest:?}: {}", err.message);
            assert_eq!(err.expected, EXPECT_BUDGET);
        }
        assert_eq!(line_of(&with_line(3, "MISSION BUDGET: $25.00 USD")), 3);
        assert_eq!(
            line_of(&with_line(3, "MISSION BUDGET (hard maximum):$25.00 USD")),
            3
        );
    }

    #[test]
    fn malformed_type_lines_name_their_line() {
        for (n, line) in [
            (1, "MISSION TYPE:"),
            (1, "MISSION TYPE: "),
            (1, "MISSION TYPE:research"),
            (1, "MISSION TYPE:  research"),
            (1, "MISSION TYPE: two words"),
            (1, "MISSION TYPE: 9lives"),
            (1, "MISSION TYPE: résumé"),
            (1, "mission type: research"),
            (1, " MISSION TYPE: research"),
            (1, "TYPE: research"),
            (1, ""),
            (2, "MISSION BUDGET TYPE:"),
            (2, "MISSION BUDGET TYPE: fixed price"),
            (2, "MISSION BUDGET: fixed"),
            (2, "MISSION TYPE: research"),
        ] {
            let msg = with_line(n, line);
            let err = parse(&msg).expect_err(&msg);
            assert_eq!(err.line, n, "{line:?}: {}", err.message);
        }
        let long = format!("MISSION TYPE: {}", "a".repeat(MAX_WORD + 1));
        assert_eq!(line_of(&with_line(1, &long)), 1);
    }

    #[test]
    fn lines_out_of_order_fail_at_the_first_wrong_line() {
        let swapped = "MISSION BUDGET TYPE: fixed\nMISSION TYPE: research\nMISSION BUDGET (hard maximum): $25.00 USD\nMISSION OBJECTIVE:\nx";
        assert_eq!(line_of(swapped), 1);
        let swapped = "MISSION TYPE: research\nMISSION BUDGET (hard maximum): $25.00 USD\nMISSION BUDGET TYPE: fixed\nMISSION OBJECTIVE:\nx";
        assert_eq!(line_of(swapped), 2);
        let objective_first = "MISSION TYPE: research\nMISSION BUDGET TYPE: fixed\nMISSION OBJECTIVE:\nMISSION BUDGET (hard maximum): $25.00 USD\nx";
        assert_eq!(line_of(objective_first), 3);
    }

    #[test]
    fn a_blank_line_before_the_labels_is_a_deviation() {
        assert_eq!(line_of(&format!("\n{GOOD}")), 1);
    }

    #[test]
    fn objective_label_must_stand_alone() {
        let err = parse(&with_line(4, "MISSION OBJECTIVE: find things")).unwrap_err();
        assert_eq!(err.line, 4);
        assert!(err.message.contains("alone"), "{}", err.message);
        assert_eq!(line_of(&with_line(4, "MISSION OBJECTIVES:")), 4);
        assert_eq!(line_of(&with_line(4, "OBJECTIVE:")), 4);
    }

    #[test]
    fn truncated_messages_name_the_missing_line() {
        assert_eq!(line_of(""), 1);
        assert_eq!(line_of("MISSION TYPE: research"), 2);
        assert_eq!(line_of("MISSION TYPE: research\n"), 2);
        assert_eq!(
            line_of("MISSION TYPE: research\nMISSION BUDGET TYPE: fixed\n"),
            3
        );
        let three = "MISSION TYPE: research\nMISSION BUDGET TYPE: fixed\nMISSION BUDGET (hard maximum): $25.00 USD";
        assert_eq!(line_of(three), 4);
        assert_eq!(line_of(&format!("{three}\n")), 4);
        let four = format!("{three}\nMISSION OBJECTIVE:");
        let err = parse(&four).unwrap_err();
        assert_eq!((err.line, err.expected), (5, EXPECT_OBJECTIVE));
        assert_eq!(line_of(&format!("{four}\n")), 6);
        assert_eq!(line_of(&format!("{four}\n\n")), 6);
    }

    #[test]
    fn blank_objectives_are_refused() {
        let four = "MISSION TYPE: research\nMISSION BUDGET TYPE: fixed\nMISSION BUDGET (hard maximum): $25.00 USD\nMISSION OBJECTIVE:";
        assert_eq!(line_of(&format!("{four}\n   ")), 6);
        assert_eq!(line_of(&format!("{four}\n \t \n  \n\n")), 6);
        let err = parse(&format!("{four}\n\n\nToo far down.")).unwrap_err();
        assert_eq!(err.line, 6);
        assert!(err.message.contains("one blank line"), "{}", err.message);
    }

    #[test]
    fn errors_quote_the_line_briefly() {
        let long = format!("MISSION TYPE {}", "x".repeat(500));
        let err = parse(&with_line(1, &long)).unwrap_err();
        assert!(err.message.len() < 250, "{}", err.message);
        assert!(
            err.message.starts_with("Line 1: expected"),
            "{}",
            err.message
        );
    }
}
