//! How the sandbox's agent speaks and works inside a step: its text as deltas, its
//! steps' starts and ends, its tool calls and their results, the sources and claims it
//! draws.

use super::*;

impl Agent {
    /// Text as deltas of 1 to 20 characters, split at char boundaries.
    pub(super) fn deltas(&mut self, text: &str) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let n = self.rng.range(1, 20) as usize;
            let end = (i + n).min(chars.len());
            out.push(chars[i..end].iter().collect());
            i = end;
        }
        out
    }

    /// An assistant message: deltas then `message.completed`.
    pub(super) fn say(&mut self, out: &mut Vec<Ev>, text: &str, finish: &str) {
        let parts = self.deltas(text);
        self.say_parts(out, parts, finish);
    }

    /// An assistant message already cut into its deltas.
    pub(super) fn say_parts(&mut self, out: &mut Vec<Ev>, parts: Vec<String>, finish: &str) {
        let text = parts.concat();
        for d in parts {
            out.push(self.in_step("message.appended", json!({"messageDelta": d})));
        }
        let mut done = json!({"message": text, "finishReason": finish});
        if self.make_files && finish == "stop" {
            // Turned into 27's `content.completed {kind: "file"}` records by the wire.
            done["agentFiles"] = json!([
                {"filename": "findings.pdf", "mediaType": "application/pdf",
                 "url": "https://files.example.org/findings.pdf", "size": 48_213},
                {"filename": "chart.png", "mediaType": "image/png",
                 "url": "data:image/png;base64,iVBORw0KGgo=", "size": 8},
            ]);
        }
        out.push(self.in_step("message.completed", done));
    }

    /// Exactly `n` deltas: `head`, then a discussion of findings written on for as long
    /// as it takes, then `closing` (cut short only when `n` is too small for it).
    pub(super) fn long_reply(&mut self, head: &str, closing: &str, n: usize) -> Vec<String> {
        let tail = self.deltas(closing);
        let want = n.saturating_sub(tail.len());
        let mut parts = self.deltas(head);
        if parts.len() < want {
            parts.extend(self.deltas("\n## Discussion\n\n"));
        }
        let mut k = 0u64;
        while parts.len() < want {
            k += 1;
            let claim = self.claim();
            let (url, title) = self.source();
            let end = if k.is_multiple_of(5) { "\n\n" } else { " " };
            let sentence = format!("Finding {k}: {claim} ([{title}]({url})).{end}");
            parts.extend(self.deltas(&sentence));
        }
        parts.truncate(want);
        parts.extend(tail);
        parts.truncate(n);
        parts
    }

    pub(super) fn think(&mut self, out: &mut Vec<Ev>, text: &str) {
        for d in self.deltas(text) {
            out.push(self.in_step("reasoning.appended", json!({"reasoningDelta": d})));
        }
        out.push(self.in_step("reasoning.completed", json!({"reasoning": text})));
    }

    pub(super) fn step_started(&mut self, out: &mut Vec<Ev>) {
        out.push(self.in_step("step.started", json!({"modelId": MODEL_ID})));
    }

    /// `step.completed` with this step's usage; its cost is a share of what is left
    /// under the cap.
    pub(super) fn step_completed(&mut self, out: &mut Vec<Ev>, finish: &str) {
        let cap = self.budget_cents * SPEND_CAP_PERCENT / 100;
        let share = 0.06 + 0.08 * self.rng.unit();
        let cost = (cap.saturating_sub(self.spent_cents) as f64 * share) as u64;
        self.spent_cents += cost;
        let usage = json!({
            "inputTokens": self.rng.range(900, 4200),
            "outputTokens": self.rng.range(80, 700),
            "cacheReadTokens": self.rng.range(0, 2000),
            "cacheWriteTokens": self.rng.range(0, 400),
            "costUsd": cost as f64 / 100.0,
        });
        out.push(self.in_step(
            "step.completed",
            json!({"finishReason": finish, "usage": usage}),
        ));
        self.step += 1;
    }

    pub(super) fn topic(&self) -> String {
        format!("{} and {}", self.phrases[0], self.phrases[1])
    }

    pub(super) fn short_objective(&self) -> String {
        let mut s: String = self.objective.chars().take(90).collect();
        if self.objective.chars().count() > 90 {
            s.push('…');
        }
        s
    }

    /// One tool call in its own step: narration, the call, its input, its result.
    pub(super) fn call(
        &mut self,
        out: &mut Vec<Ev>,
        narration: &str,
        tool: &'static str,
        input: Value,
    ) {
        let call_id = self.call_request(out, narration, tool, &input);
        self.call_result(out, &call_id, tool, input);
    }

    /// A call's step up to its input: narration, the request, the input streamed.
    pub(super) fn call_request(
        &mut self,
        out: &mut Vec<Ev>,
        narration: &str,
        tool: &'static str,
        input: &Value,
    ) -> String {
        self.step_started(out);
        self.say(out, narration, "tool-calls");
        let call_id = self.id("call");
        out.push(self.in_step(
            "actions.requested",
            json!({"actions": [{"kind": "tool-call", "callId": call_id, "toolName": tool, "input": input}]}),
        ));
        let text = input.to_string();
        let mid = text.len() / 2;
        let mid = (mid..text.len())
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(text.len());
        for part in [&text[..mid], &text[mid..]] {
            out.push(self.in_step(
                "action.input.appended",
                json!({"callId": call_id, "toolName": tool, "inputTextDelta": part}),
            ));
        }
        call_id
    }

    /// A call's result and the end of its step.
    pub(super) fn call_result(
        &mut self,
        out: &mut Vec<Ev>,
        call_id: &str,
        tool: &'static str,
        input: Value,
    ) {
        let failed = tool == "read_source" && self.rng.unit() < 0.12;
        let sources = if tool == "web_search" {
            let n = self.rng.range(1, 3);
            let mut v = Vec::new();
            for _ in 0..n {
                let s = self.source();
                v.push(json!({"url": s.0, "title": s.1}));
                self.found.push(s);
            }
            v
        } else if failed {
            Vec::new()
        } else {
            let url = input["url"].as_str().unwrap_or_default().to_owned();
            let title = self
                .found
                .iter()
                .find(|(u, _)| *u == url)
                .map(|(_, t)| t.clone())
                .unwrap_or_default();
            vec![json!({"url": url, "title": title})]
        };
        let mut result = json!({
            "kind": "tool-result", "callId": call_id, "toolName": tool,
            "output": {"sources": sources},
        });
        let ev = if failed {
            result["isError"] = json!(true);
            self.in_step(
                "action.result",
                json!({"status": "failed", "error": {"code": "fetch_failed", "message": "The source did not answer in time."}, "result": result}),
            )
        } else {
            self.in_step(
                "action.result",
                json!({"status": "completed", "result": result}),
            )
        };
        out.push(ev);
        if !failed && tool == "read_source" {
            let url = input["url"].as_str().unwrap_or_default().to_owned();
            let title = sources[0]["title"].as_str().unwrap_or_default().to_owned();
            let claim = self.claim();
            self.claims.push((claim, title, url));
        }
        self.step_completed(out, "tool-calls");
    }

    pub(super) fn source(&mut self) -> (String, String) {
        let a = self.phrases[self.rng.below(self.phrases.len() as u64) as usize].clone();
        let b = self.phrases[1].clone();
        let year = self.rng.range(2015, 2025);
        let n = self.rng.range(10_000, 99_999);
        let slug = ascii_slug(&format!("{a}-{b}"));
        match self.rng.range(0, 3) {
            0 => (
                format!("https://doi.org/10.1016/{slug}.{year}.{n}"),
                format!("Effects of {a} on {b}: a cohort study ({year})"),
            ),
            1 => (
                format!("https://pubmed.ncbi.nlm.nih.gov/{}/", 30_000_000 + n * 100),
                format!("{a} and {b}: a systematic review"),
            ),
            2 => (
                format!("https://www.who.int/publications/i/item/{slug}-{year}"),
                format!("Global report on {a} and {b}, {year}"),
            ),
            _ => (
                format!("https://data.europa.eu/data/datasets/{slug}-{year}"),
                format!("{a} indicators, {year} release"),
            ),
        }
    }

    pub(super) fn claim(&mut self) -> String {
        let a = &self.phrases[0];
        let b = &self.phrases[1];
        let p = self.rng.range(4, 38);
        match self.rng.range(0, 2) {
            0 => format!("{a} is associated with a {p}% difference in {b}"),
            1 => format!("the link between {a} and {b} holds after adjustment"),
            _ => format!("the effect of {a} on {b} is weaker than commonly claimed"),
        }
    }
}
