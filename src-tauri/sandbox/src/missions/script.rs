//! A mission's turn as a sequence of events, generated from its objective, budget and
//! seed.
//!
//! The script is a pure function of those inputs and is produced lazily, so a
//! sandbox restarted mid-turn regenerates it and skips what the log already holds,
//! and a 100 000-event benchmark turn never sits in memory at once. The payloads
//! carry only the per-kind fields; `sessionId`, `seq` and `sentAt` are added when an
//! event is appended to a session's log.

use serde_json::{Value, json};
use std::collections::VecDeque;

/// Events a turn has when the create request does not ask for a number.
pub const DEFAULT_EVENTS: std::ops::RangeInclusive<u64> = 25..=40;
/// The shortest turn: start, plan, one round and the three closing events.
pub const MIN_EVENTS: u64 = 10;
pub const MAX_EVENTS: u64 = 100_000;
/// The report lists at most this many findings, so a benchmark-sized turn does not
/// end in a megabyte-long event.
const MAX_REPORT_FINDINGS: usize = 25;
/// Spend stops short of this share of the budget, so "under budget" holds with room.
const SPEND_CAP_PERCENT: u64 = 90;

pub use crate::rng::Rng;

/// The turn id of a session's (only) turn.
pub fn turn_id(seed: u64) -> String {
    format!(
        "turn_{:012x}",
        Rng::new(seed ^ 0x7475_726e).next_u64() >> 16
    )
}

/// Dollars as a JSON number, from exact cents.
pub fn usd(cents: u64) -> Value {
    json!(cents as f64 / 100.0)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Start,
    Rounds,
    Done,
}

pub struct Script {
    rng: Rng,
    objective: String,
    budget_cents: u64,
    target: u64,
    turn_id: String,
    /// The objective's noun phrases: what searches, titles and quotes are about.
    phrases: Vec<String>,
    phase: Phase,
    queue: VecDeque<(&'static str, Value)>,
    emitted: u64,
    rounds: u64,
    spent_cents: u64,
    searches: u64,
    sources: u64,
    claims: Vec<String>,
    verified: u64,
}

impl Script {
    /// `events`: the turn's length to aim for (clamped to what a turn can be); `None`
    /// picks one in [`DEFAULT_EVENTS`] from the seed.
    pub fn new(objective: &str, budget_cents: u64, seed: u64, events: Option<u64>) -> Self {
        let mut rng = Rng::new(seed);
        let default = rng.range(*DEFAULT_EVENTS.start(), *DEFAULT_EVENTS.end());
        let target = events.unwrap_or(default).clamp(MIN_EVENTS, MAX_EVENTS);
        let mut phrases = phrases(objective);
        // Two distinct subjects at least, so every round can relate one to another.
        for fallback in ["the evidence base", "reported outcomes"] {
            if phrases.len() < 2 {
                phrases.push(fallback.to_owned());
            }
        }
        Self {
            rng,
            objective: objective.to_owned(),
            budget_cents,
            target,
            turn_id: turn_id(seed),
            phrases,
            phase: Phase::Start,
            queue: VecDeque::new(),
            emitted: 0,
            rounds: 0,
            spent_cents: 0,
            searches: 0,
            sources: 0,
            claims: Vec::new(),
            verified: 0,
        }
    }

    fn phrase(&self, i: u64) -> &str {
        &self.phrases[(i % self.phrases.len() as u64) as usize]
    }

    /// The first two subjects, naming the topic in plans and the report title.
    fn topic(&self) -> String {
        format!("{} and {}", self.phrases[0], self.phrases[1])
    }

    fn short_objective(&self) -> String {
        const MAX: usize = 90;
        let flat = self
            .objective
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if flat.chars().count() <= MAX {
            return flat;
        }
        let mut cut: String = flat.chars().take(MAX).collect();
        if let Some(space) = cut.rfind(' ') {
            cut.truncate(space);
        }
        cut.push('…');
        cut
    }

    fn start(&mut self) {
        self.queue.push_back((
            "turn.started",
            json!({
                "turnId": self.turn_id,
                "objective": self.objective,
                "budgetUsd": usd(self.budget_cents),
            }),
        ));
        let obj = self.short_objective();
        let topic = self.topic();
        let budget = format!("${:.2}", self.budget_cents as f64 / 100.0);
        let middle = [
            format!("Search peer-reviewed literature and preprints on {topic}"),
            format!("Pull official statistics and open datasets on {topic}"),
            format!("Extract quotes that bear on \"{obj}\" and note what each supports"),
            "Cross-check every claim against at least two independent sources".to_owned(),
        ];
        let keep = self.rng.range(1, 3) as usize;
        let mut steps = vec![format!("Frame the question: {obj}")];
        steps.extend(middle.into_iter().take(keep));
        steps.push(format!(
            "Verify findings and write the report on \"{obj}\" within the {budget} budget"
        ));
        self.queue.push_back(("plan", json!({ "steps": steps })));
    }

    /// One search: a query, the sources it turned up, a quote from each, the spend so
    /// far and the finding those quotes verify. `sources` is 1 or 2.
    fn round(&mut self, sources: u64) {
        let r = self.rounds;
        self.rounds += 1;
        let n = self.phrases.len() as u64;
        // The objective's first subject is usually what it asks about, so half the
        // rounds come back to it.
        let anchor = if self.rng.unit() < 0.5 { 0 } else { r };
        let a = self.phrase(anchor).to_owned();
        // An offset in 1..n, so `b` is never `a`.
        let offset = 1 + self.rng.range(0, 2) % (n - 1);
        let b = self.phrase(anchor + offset).to_owned();
        let (query, engine) = match self.rng.range(0, 6) {
            0 => (format!("{a} {b} systematic review"), "scholar"),
            1 => (format!("{a} {b} meta-analysis"), "scholar"),
            2 => (format!("\"{a}\" {b} official statistics"), "web"),
            3 => (format!("{a} {b} open dataset"), "datasets"),
            4 => (
                format!("{a} impact on {b} {}", self.rng.range(2019, 2025)),
                "web",
            ),
            5 => (format!("{a} {b} randomized trial"), "scholar"),
            _ => (format!("{a} {b} policy report"), "news"),
        };
        self.searches += 1;
        self.queue
            .push_back(("search.query", json!({"query": query, "engine": engine})));

        let mut urls = Vec::new();
        let mut claim = String::new();
        let mut found = Vec::new();
        for _ in 0..sources {
            let source = self.source(&a, &b);
            self.sources += 1;
            urls.push(source.url.clone());
            self.queue.push_back((
                "source.found",
                json!({
                    "title": source.title,
                    "url": source.url,
                    "publisher": source.publisher,
                    "year": source.year,
                }),
            ));
            found.push(source);
        }
        let template = self.rng.range(0, 4);
        for source in &found {
            let (quote, supports) = self.quote(&a, &b, source.year, template);
            if claim.is_empty() {
                claim = supports.clone();
            }
            self.queue.push_back((
                "evidence",
                json!({"sourceUrl": source.url, "quote": quote, "supports": supports}),
            ));
        }

        // Each round spends a share of what is left under the cap, so spend rises
        // but never reaches the cap however many rounds a long turn has.
        let cap = self.budget_cents * SPEND_CAP_PERCENT / 100;
        let share = 0.18 + 0.2 * self.rng.unit();
        let step = ((cap.saturating_sub(self.spent_cents)) as f64 * share) as u64;
        self.spent_cents += step;
        self.queue.push_back((
            "spend.updated",
            json!({"spentUsd": usd(self.spent_cents), "budgetUsd": usd(self.budget_cents)}),
        ));

        let confidence = ((0.55 + 0.4 * self.rng.unit()) * 100.0).round() / 100.0;
        self.verified += 1;
        if self.claims.len() < MAX_REPORT_FINDINGS && !self.claims.contains(&claim) {
            self.claims.push(claim.clone());
        }
        self.queue.push_back((
            "finding.verified",
            json!({"claim": claim, "confidence": confidence, "sources": urls}),
        ));
    }

    fn finish(&mut self) {
        let title = format!("Investigation: {}", capitalise(&self.topic()));
        let summary = format!(
            "On \"{}\": {} searches turned up {} sources, from which {} findings were verified. Spent ${:.2} of the ${:.2} budget.",
            self.short_objective(),
            self.searches,
            self.sources,
            self.verified,
            self.spent_cents as f64 / 100.0,
            self.budget_cents as f64 / 100.0,
        );
        self.queue.push_back((
            "report.final",
            json!({"title": title, "summary": summary, "findings": self.claims}),
        ));
        self.queue
            .push_back(("turn.completed", json!({"turnId": self.turn_id})));
        self.queue
            .push_back(("session.completed", json!({"reportTitle": title})));
    }

    fn source(&mut self, a: &str, b: &str) -> Source {
        let year = self.rng.range(2015, 2025);
        let slug = format!("{}-{}", slugify(a), slugify(b));
        let n5 = self.rng.range(10_000, 99_999);
        let title = match self.rng.range(0, 5) {
            0 => format!(
                "{} and {b}: a systematic review and meta-analysis",
                capitalise(a)
            ),
            1 => format!("Effects of {a} on {b}: evidence from a multi-country cohort"),
            2 => format!("{} and {b} indicators, {year} release", capitalise(a)),
            3 => format!("Measuring {a} in relation to {b}"),
            4 => format!("Global report on {a} and {b}"),
            _ => format!("{}, {b} and policy outcomes: a panel study", capitalise(a)),
        };
        let (url, publisher) = match self.rng.range(0, 8) {
            0 => {
                let prefix = self.rng.range(1000, 1200);
                let publisher = *self.rng.pick(&[
                    "Elsevier",
                    "Springer Nature",
                    "Wiley",
                    "Taylor & Francis",
                    "PLOS",
                    "BMJ Publishing Group",
                ]);
                (
                    format!("https://doi.org/10.{prefix}/{slug}.{year}.{n5}"),
                    publisher,
                )
            }
            1 => (
                format!(
                    "https://arxiv.org/abs/{:02}{:02}.{n5}",
                    year % 100,
                    self.rng.range(1, 12)
                ),
                "arXiv",
            ),
            2 => {
                let journal = *self.rng.pick(&["41586", "41467", "41598", "41558"]);
                (
                    format!(
                        "https://www.nature.com/articles/s{journal}-0{:02}-{n5}-{}",
                        year % 100,
                        self.rng.range(0, 9)
                    ),
                    "Nature Portfolio",
                )
            }
            3 => (
                format!(
                    "https://www.who.int/publications/i/item/9789240{:06}",
                    self.rng.range(0, 999_999)
                ),
                "World Health Organization",
            ),
            4 => {
                let publisher = *self.rng.pick(&[
                    "U.S. Census Bureau",
                    "Centers for Disease Control and Prevention",
                    "National Oceanic and Atmospheric Administration",
                    "U.S. Department of Energy",
                ]);
                (
                    format!("https://catalog.data.gov/dataset/{slug}-{year}"),
                    publisher,
                )
            }
            5 => (
                format!(
                    "https://ec.europa.eu/eurostat/databrowser/view/{}_{n5}/default/table",
                    abbreviate(a)
                ),
                "Eurostat",
            ),
            6 => (
                format!("https://data.europa.eu/data/datasets/{slug}-{year}"),
                "Publications Office of the European Union",
            ),
            7 => (
                format!(
                    "https://pubmed.ncbi.nlm.nih.gov/{}/",
                    self.rng.range(30_000_000, 39_999_999)
                ),
                "National Library of Medicine",
            ),
            _ => (
                format!(
                    "https://www.oecd.org/en/publications/{slug}_{:08x}-en.html",
                    self.rng.next_u64() as u32
                ),
                "OECD Publishing",
            ),
        };
        Source {
            title,
            url,
            publisher,
            year,
        }
    }

    /// A quote from a source and the claim it supports; `template` picks the claim, so
    /// every source in a round backs the same one.
    fn quote(&mut self, a: &str, b: &str, year: u64, template: u64) -> (String, String) {
        let p = self.rng.range(4, 38);
        match template {
            0 => (
                format!(
                    "Across {} studies ({} participants), the association between {a} and {b} was consistent, with a {p}% difference between the highest and lowest groups.",
                    self.rng.range(6, 60),
                    self.rng.range(2, 90) * 1000
                ),
                format!("The association between {a} and {b} is consistent across studies."),
            ),
            1 => (
                format!(
                    "Between {} and {year}, indicators of {a} rose by {p}% alongside {b}.",
                    year - self.rng.range(5, 12)
                ),
                format!("Indicators of {a} have risen together with {b} over the past decade."),
            ),
            2 => (
                format!(
                    "We find a statistically significant relationship between {a} and {b} (p < 0.0{}).",
                    self.rng.range(1, 5)
                ),
                format!("The link between {a} and {b} is statistically robust."),
            ),
            3 => (
                format!("Adjusted for confounders, {a} explained {p}% of the variance in {b}."),
                format!("Differences in {a} explain a meaningful share of the variation in {b}."),
            ),
            _ => (
                format!(
                    "No consistent effect of {a} on {b} was found after {} years of follow-up.",
                    self.rng.range(2, 12)
                ),
                format!("The effect of {a} on {b} is weaker than commonly claimed."),
            ),
        }
    }
}

struct Source {
    title: String,
    url: String,
    publisher: &'static str,
    year: u64,
}

impl Iterator for Script {
    type Item = (&'static str, Value);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                self.emitted += 1;
                return Some(event);
            }
            match self.phase {
                Phase::Start => {
                    self.start();
                    self.phase = Phase::Rounds;
                }
                Phase::Rounds => {
                    // A round has 2k+3 events for k sources; the turn closes with 3.
                    let room = self.target.saturating_sub(self.emitted + 3);
                    let two = self.rng.unit() < 0.6;
                    if room >= 7 && two {
                        self.round(2);
                    } else if room >= 5 || self.rounds == 0 {
                        self.round(1);
                    } else {
                        self.finish();
                        self.phase = Phase::Done;
                    }
                }
                Phase::Done => return None,
            }
        }
    }
}

/// Words that end a noun phrase: function words, and the verbs objectives are
/// phrased with ("how does X affect Y").
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "across",
    "affect",
    "affected",
    "affects",
    "after",
    "against",
    "all",
    "also",
    "among",
    "amongst",
    "an",
    "and",
    "any",
    "are",
    "around",
    "as",
    "assess",
    "at",
    "based",
    "be",
    "been",
    "before",
    "behind",
    "being",
    "below",
    "best",
    "between",
    "beyond",
    "but",
    "by",
    "can",
    "cause",
    "caused",
    "causes",
    "change",
    "changed",
    "changes",
    "compare",
    "compared",
    "could",
    "current",
    "determine",
    "did",
    "do",
    "does",
    "doing",
    "drive",
    "driven",
    "drives",
    "during",
    "each",
    "estimate",
    "evaluate",
    "every",
    "evidence",
    "examine",
    "explain",
    "explore",
    "extent",
    "find",
    "for",
    "from",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "his",
    "how",
    "i",
    "identify",
    "if",
    "impact",
    "impacts",
    "improve",
    "improves",
    "in",
    "increase",
    "increases",
    "influence",
    "influences",
    "into",
    "investigate",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "latest",
    "lead",
    "leads",
    "many",
    "may",
    "me",
    "measure",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "new",
    "no",
    "nor",
    "not",
    "of",
    "on",
    "only",
    "or",
    "other",
    "our",
    "over",
    "recent",
    "recently",
    "reduce",
    "reduces",
    "relate",
    "related",
    "relates",
    "role",
    "same",
    "shall",
    "she",
    "should",
    "show",
    "shows",
    "since",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "understand",
    "until",
    "upon",
    "us",
    "use",
    "used",
    "using",
    "versus",
    "very",
    "via",
    "vs",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "worsen",
    "worsens",
    "would",
    "you",
    "your",
];
const MAX_PHRASE_WORDS: usize = 3;
const MAX_PHRASES: usize = 8;

/// The objective's noun phrases (runs of words between stopwords and punctuation, at
/// most three words each), in order of first appearance.
pub fn phrases(objective: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    fn push(run: &[String], out: &mut Vec<String>) {
        for chunk in run.chunks(MAX_PHRASE_WORDS) {
            let single = chunk.len() == 1;
            if single
                && (chunk[0].chars().count() < 4 || chunk[0].chars().all(|c| c.is_ascii_digit()))
            {
                continue;
            }
            let phrase = chunk.join(" ");
            if !out.iter().any(|p| p.eq_ignore_ascii_case(&phrase)) && out.len() < MAX_PHRASES {
                out.push(phrase);
            }
        }
    }
    let mut first = true;
    for segment in objective
        .split(|c: char| !(c.is_alphanumeric() || c.is_whitespace() || c == '-' || c == '\''))
    {
        let mut run: Vec<String> = Vec::new();
        for word in segment.split_whitespace() {
            let word = word.trim_matches(|c| c == '-' || c == '\'');
            if word.is_empty() {
                continue;
            }
            let lower = word.to_lowercase();
            // The objective's first word is capitalised as a sentence start, not a name.
            let word = if std::mem::take(&mut first) && word.chars().skip(1).any(char::is_lowercase)
            {
                lower.clone()
            } else {
                word.to_owned()
            };
            if STOPWORDS.contains(&lower.as_str()) {
                push(&run, &mut out);
                run.clear();
            } else {
                run.push(word);
            }
        }
        push(&run, &mut out);
    }
    out
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Each ASCII letter or digit lowercased, anything else a dash: ASCII-only, so URLs stay
/// plain whatever language the objective is in.
pub(crate) fn ascii_slug(s: &str) -> String {
    (s.chars())
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// [`ascii_slug`], trimmed of dashes; never empty.
fn slugify(s: &str) -> String {
    let slug = ascii_slug(s);
    let slug = slug.trim_matches('-').to_owned();
    if slug.is_empty() {
        "topic".to_owned()
    } else {
        slug
    }
}

fn abbreviate(s: &str) -> String {
    let slug = slugify(s).replace('-', "");
    slug.chars().take(4).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::seed_from;

    const OBJECTIVE: &str = "How does urban heat exposure affect hospital admissions among older adults in European cities?";

    fn events(seed: u64, target: Option<u64>) -> Vec<(&'static str, Value)> {
        Script::new(OBJECTIVE, 2500, seed, target).collect()
    }

    #[test]
    fn default_turns_have_25_to_40_events_and_close_properly() {
        for seed in 0..200 {
            let ev = events(seed, None);
            let n = ev.len() as u64;
            assert!((MIN_EVENTS..=40).contains(&n), "seed {seed}: {n} events");
            assert!(n >= 20, "seed {seed}: only {n} events");
            let kinds: Vec<_> = ev.iter().map(|(k, _)| *k).collect();
            assert_eq!(&kinds[..2], ["turn.started", "plan"]);
            assert_eq!(
                &kinds[kinds.len() - 3..],
                ["report.final", "turn.completed", "session.completed"]
            );
        }
    }

    #[test]
    fn every_kind_appears_with_its_fields() {
        let ev = events(7, None);
        let fields: &[(&str, &[&str])] = &[
            ("turn.started", &["turnId", "objective", "budgetUsd"]),
            ("plan", &["steps"]),
            ("search.query", &["query", "engine"]),
            ("source.found", &["title", "url", "publisher", "year"]),
            ("evidence", &["sourceUrl", "quote", "supports"]),
            ("finding.verified", &["claim", "confidence", "sources"]),
            ("spend.updated", &["spentUsd", "budgetUsd"]),
            ("report.final", &["title", "summary", "findings"]),
            ("turn.completed", &["turnId"]),
            ("session.completed", &["reportTitle"]),
        ];
        for (kind, names) in fields {
            let found: Vec<_> = ev.iter().filter(|(k, _)| k == kind).collect();
            assert!(!found.is_empty(), "no {kind}");
            for (_, data) in found {
                for name in *names {
                    assert!(data.get(name).is_some(), "{kind} lacks {name}: {data}");
                }
            }
        }
    }

    #[test]
    fn same_seed_same_script_other_seed_other_script() {
        assert_eq!(events(42, None), events(42, None));
        assert_ne!(events(42, None), events(43, None));
    }

    #[test]
    fn plan_has_3_to_5_steps_mentioning_the_objective() {
        for seed in 0..50 {
            let ev = events(seed, None);
            let steps = ev[1].1["steps"].as_array().unwrap();
            assert!((3..=5).contains(&steps.len()), "{steps:?}");
            assert!(
                steps
                    .iter()
                    .any(|s| s.as_str().unwrap().contains("urban heat")),
                "{steps:?}"
            );
        }
    }

    #[test]
    fn phrases_are_the_objectives_subjects() {
        assert_eq!(
            phrases(OBJECTIVE),
            [
                "urban heat exposure",
                "hospital admissions",
                "older adults",
                "European cities"
            ]
        );
        assert_eq!(
            phrases("Heat, flooding and drought: costs to EU farms since 2010?"),
            ["heat", "flooding", "drought", "costs", "EU farms"]
        );
        assert_eq!(
            phrases("machine learning model performance benchmarks"),
            ["machine learning model", "performance benchmarks"]
        );
        assert_eq!(phrases("NASA budget trends"), ["NASA budget trends"]);
        assert!(phrases("Why? How? Is it?").is_empty());
    }

    #[test]
    fn queries_use_the_objectives_phrases() {
        let ph = phrases(OBJECTIVE);
        for (_, data) in events(3, None).iter().filter(|(k, _)| *k == "search.query") {
            let q = data["query"].as_str().unwrap();
            assert!(
                ph.iter().filter(|p| q.contains(p.as_str())).count() == 2,
                "{q}"
            );
        }
    }

    #[test]
    fn sources_live_on_plausible_domains() {
        let domains = [
            "https://doi.org/10.",
            "https://arxiv.org/abs/",
            "https://www.nature.com/articles/",
            "https://www.who.int/",
            "https://catalog.data.gov/",
            "https://ec.europa.eu/",
            "https://data.europa.eu/",
            "https://pubmed.ncbi.nlm.nih.gov/",
            "https://www.oecd.org/",
        ];
        let mut seen = std::collections::HashSet::new();
        for seed in 0..30 {
            for (_, data) in events(seed, None)
                .iter()
                .filter(|(k, _)| *k == "source.found")
            {
                let url = data["url"].as_str().unwrap();
                let d = domains.iter().find(|d| url.starts_with(**d));
                assert!(d.is_some(), "{url}");
                seen.insert(*d.unwrap());
                assert!(!url.contains(' '), "{url}");
                let year = data["year"].as_u64().unwrap();
                assert!((2015..=2025).contains(&year));
            }
        }
        assert_eq!(seen.len(), domains.len(), "{seen:?}");
    }

    #[test]
    fn evidence_and_findings_cite_urls_that_were_found() {
        let ev = events(11, None);
        let mut found = std::collections::HashSet::new();
        for (kind, data) in &ev {
            match *kind {
                "source.found" => {
                    found.insert(data["url"].as_str().unwrap().to_owned());
                }
                "evidence" => assert!(found.contains(data["sourceUrl"].as_str().unwrap())),
                "finding.verified" => {
                    let c = data["confidence"].as_f64().unwrap();
                    assert!((0.0..=1.0).contains(&c));
                    for u in data["sources"].as_array().unwrap() {
                        assert!(found.contains(u.as_str().unwrap()));
                    }
                }
                _ => {}
            }
        }
    }

    #[test]
    fn spend_rises_and_stays_strictly_under_budget() {
        for budget in [1, 7, 99, 700, 2500, 1_000_000] {
            for target in [None, Some(2_000)] {
                let mut last = 0.0;
                let mut count = 0;
                for (kind, data) in Script::new(OBJECTIVE, budget, 5, target) {
                    if kind == "spend.updated" {
                        let spent = data["spentUsd"].as_f64().unwrap();
                        assert!(spent >= last, "{spent} after {last}");
                        assert!(spent * 100.0 < budget as f64, "{spent} of {budget}");
                        assert_eq!(data["budgetUsd"].as_f64().unwrap(), budget as f64 / 100.0);
                        last = spent;
                        count += 1;
                    }
                }
                assert!(count > 0);
                if budget >= 100 {
                    assert!(last > 0.0, "nothing spent of {budget}");
                }
            }
        }
    }

    #[test]
    fn requested_lengths_are_met_closely() {
        for target in [10, 11, 12, 30, 100, 1_000, 10_000] {
            let n = events(1, Some(target)).len() as u64;
            assert!(n <= target && n + 4 >= target, "{n} for {target}");
        }
        assert_eq!(events(1, Some(1)).len() as u64, MIN_EVENTS);
        let n = Script::new(OBJECTIVE, 2500, 1, Some(u64::MAX)).count() as u64;
        assert!(n <= MAX_EVENTS && n + 4 >= MAX_EVENTS, "{n}");
    }

    #[test]
    fn report_findings_are_bounded() {
        let ev = events(2, Some(5_000));
        let report = &ev[ev.len() - 3].1;
        let findings = report["findings"].as_array().unwrap();
        assert!(!findings.is_empty() && findings.len() <= MAX_REPORT_FINDINGS);
    }

    #[test]
    fn objectives_without_keywords_still_make_a_script() {
        let ev: Vec<_> = Script::new("Why? How? Is it?", 500, 1, None).collect();
        assert!(ev.len() >= 20);
        let ev: Vec<_> = Script::new("Влияние жары на здоровье пожилых", 500, 1, None).collect();
        for (_, data) in ev.iter().filter(|(k, _)| *k == "source.found") {
            assert!(data["url"].as_str().unwrap().is_ascii());
        }
    }

    #[test]
    fn seeds_follow_ids() {
        assert_eq!(seed_from("ses_1"), seed_from("ses_1"));
        assert_ne!(seed_from("ses_1"), seed_from("ses_2"));
        assert!(turn_id(1).starts_with("turn_"));
        assert_eq!(turn_id(1), turn_id(1));
    }
}
