// A scripted AI SDK language model: no network, no key. Each call reads the prompt eve
// built (system text, the mission, tool results so far) and decides the next step, so
// the same prompt always gives the same answer and eve's own replays stay consistent.
//
// The scenario comes from words in the mission objective (the text after "MISSION
// OBJECTIVE:" in the first user message), tried in this order:
//   fail      after two seconds, the call fails with a non-retryable error (eve ends the
//             session; the wait lets a client attach before eve deletes its history)
//   retry     the first attempt fails with a retryable error, the retry succeeds
//   delegate  hand a task to the `researcher` subagent, wait, report its findings
//             ("delegate ... slow N": the researcher streams for N seconds first)
//   steps     30 short steps (five slow deltas, then a search), about 30 s; a message
//             sent meanwhile joins the turn at the next step (steering)
//   slow N    one delta every 200 ms for N seconds (default 60), in ONE model step, stopped
//             by the abort signal; eve holds a message sent meanwhile until the turn ends
//   long N    a reply of N text deltas (default 3000)
//   question  ask_question with two options (free text allowed), then quote the answer
//   approval  publish_note (always needs approval), then say whether it was published
//   (none)    search, then a Markdown report citing the sources
// A later message from the person gets "You said: <their words>".
// EVE_SCRIPTED_MODEL_LOG=<file> appends each prompt and the chosen step, one JSON a line.
import { randomBytes } from "node:crypto";
import { appendFileSync } from "node:fs";
import { APICallError } from "ai";

type Prompt = Array<{ role: string; content: any }>;
type Step =
  | { kind: "text"; chunks: string[]; delayMs?: number }
  | { kind: "tool"; toolName: string; input: unknown; narration?: string[]; delayMs?: number };

const DEFAULT_LONG = 3000;
const SLOW_SECONDS = 60;
const SLOW_DELAY_MS = 200;
const STEPS = 30;

// Prompts whose first attempt already failed, so "retry" fails exactly once per prompt.
const failedOnce = new Set<string>();
let callCount = 0;

function textOf(content: any): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((p) => p && p.type === "text")
    .map((p) => p.text as string)
    .join("\n");
}

function objectiveOf(mission: string): string {
  const at = mission.indexOf("MISSION OBJECTIVE:");
  return (at >= 0 ? mission.slice(at + "MISSION OBJECTIVE:".length) : mission).trim();
}

// eve adds its own user-role notes ("[Tasks] ..." lists, "<task_result ...>" deliveries);
// only the other user messages are the person's.
function isEveNote(text: string): boolean {
  return text.startsWith("[Tasks]") || text.startsWith("<task_result");
}

/** What happened since the person's last message: tool calls, tool results, task results. */
function sinceLastUser(prompt: Prompt) {
  let last = -1;
  prompt.forEach((m, i) => {
    if (m.role === "user" && !isEveNote(textOf(m.content))) last = i;
  });
  const calls: Array<{ toolName: string; input: any }> = [];
  const results: Array<{ toolName: string; output: any }> = [];
  const taskResults: string[] = [];
  for (const m of prompt.slice(last + 1)) {
    if (m.role === "user" && textOf(m.content).startsWith("<task_result")) taskResults.push(textOf(m.content));
    if (!Array.isArray(m.content)) continue;
    for (const p of m.content) {
      if (p.type === "tool-call") calls.push({ toolName: p.toolName, input: p.input });
      if (p.type === "tool-result") results.push({ toolName: p.toolName, output: p.output });
    }
  }
  return { calls, results, taskResults };
}

/** The value inside an AI SDK tool-result output ({type:"json",value} and friends). */
function outputValue(output: any): any {
  if (output && typeof output === "object" && "value" in output) return output.value;
  return output;
}

function words(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(i === 0 ? "word0" : ` word${i}`);
  return out;
}

function chunked(text: string): string[] {
  // Several deltas per reply, so clients see real streaming rather than one blob.
  return text.match(/[^\s]+\s*|\s+/g) ?? [text];
}

function report(objective: string, sources: Array<{ title: string; url: string; snippet: string }>) {
  const lines = [`# Report: ${objective.split("\n")[0].slice(0, 80)}`, "", "## Findings", ""];
  for (const s of sources) lines.push(`- ${s.snippet} ([${s.title}](${s.url}))`);
  lines.push("", "## Conclusion", "", "The sources agree; see the findings above.");
  return lines.join("\n");
}

function sourcesIn(value: any): Array<{ title: string; url: string; snippet: string }> {
  if (value && Array.isArray(value.sources)) return value.sources;
  return [];
}

function decide(prompt: Prompt): Step | { kind: "error"; retryable: boolean } {
  const system = prompt.filter((m) => m.role === "system").map((m) => textOf(m.content)).join("\n");
  const users = prompt
    .filter((m) => m.role === "user")
    .map((m) => textOf(m.content))
    .filter((t) => !isEveNote(t));
  const mission = users.find((u) => u.includes("MISSION OBJECTIVE:")) ?? users[0] ?? "";
  const objective = objectiveOf(mission);
  const lower = objective.toLowerCase();
  const { calls, results, taskResults } = sinceLastUser(prompt);
  const resultOf = (name: string) => results.find((r) => r.toolName === name);

  if (system.includes("ROLE: researcher")) {
    // eve wraps the parent's message: "...Caller message:\n<message>".
    const task = (mission.split("Caller message:\n").pop() ?? mission).replace(/^Research:\s*/, "");
    const found = resultOf("search");
    if (!found) return { kind: "tool", toolName: "search", input: { query: task.trim().slice(0, 200) } };
    const sources = sourcesIn(outputValue(found.output));
    const text = ["Researcher findings:", ...sources.map((s) => `- ${s.snippet} (${s.url})`)].join("\n");
    // "delegate ... slow N": the child takes N seconds, so a test can cancel mid-task.
    const slowChild = /\bslow\s+(\d+)/.exec(task.toLowerCase());
    if (slowChild) {
      return { kind: "text", chunks: words((Number(slowChild[1]) * 1000) / SLOW_DELAY_MS), delayMs: SLOW_DELAY_MS };
    }
    return { kind: "text", chunks: chunked(text) };
  }

  // A later user message that is not the mission: echo it.
  const lastUser = users[users.length - 1] ?? "";
  if (users.length > 1 && !lastUser.includes("MISSION OBJECTIVE:") && calls.length === 0) {
    return { kind: "text", chunks: chunked(`You said: ${lastUser.trim()}`) };
  }

  if (/\bfail\b/.test(lower)) return { kind: "error", retryable: false };
  if (/\bretry\b/.test(lower)) {
    const key = JSON.stringify(prompt);
    if (!failedOnce.has(key)) {
      failedOnce.add(key);
      return { kind: "error", retryable: true };
    }
    return { kind: "text", chunks: chunked("Recovered after one retry. The mission is done.") };
  }
  if (/\bdelegate\b/.test(lower)) {
    if (!calls.some((c) => c.toolName === "researcher")) {
      const topic = objective.split("\n")[0].slice(0, 200);
      return { kind: "tool", toolName: "researcher", input: { message: `Research: ${topic}` } };
    }
    if (taskResults.length === 0) {
      // The call returned only a receipt: wait for the task instead of replying early.
      return { kind: "tool", toolName: "eve__task_wait", input: {} };
    }
    const urls = [...new Set(taskResults.join("\n").match(/https:\/\/example\.org\/[^\s")<]+/g) ?? [])];
    const lines = ["# Report (from the researcher)", "", ...urls.map((u) => `- A finding the researcher cited: ${u}`)];
    return { kind: "text", chunks: chunked(lines.join("\n")) };
  }

  if (/\bsteps\b/.test(lower)) {
    const done = results.filter((r) => r.toolName === "search").length;
    if (done >= STEPS) return { kind: "text", chunks: chunked(`Finished all ${STEPS} steps.`) };
    return {
      kind: "tool",
      toolName: "search",
      input: { query: `step ${done + 1}` },
      narration: [`Step ${done + 1}: `, "looking ", "at ", "more ", "sources. "],
      delayMs: SLOW_DELAY_MS,
    };
  }
  const slow = /\bslow\s+(\d+)/.exec(lower) ?? /\bslow\b/.exec(lower);
  if (slow) {
    const seconds = slow[1] ? Number(slow[1]) : SLOW_SECONDS;
    return { kind: "text", chunks: words((seconds * 1000) / SLOW_DELAY_MS), delayMs: SLOW_DELAY_MS };
  }
  const long = /\blong\s+(\d+)/.exec(lower) ?? /\blong\b/.exec(lower);
  if (long) {
    return { kind: "text", chunks: words(long[1] ? Number(long[1]) : DEFAULT_LONG) };
  }
  if (/\bquestion\b/.test(lower)) {
    const answer = resultOf("ask_question");
    if (!answer) {
      return {
        kind: "tool",
        toolName: "ask_question",
        input: {
          question: "Which period should the investigation cover?",
          options: [
            { label: "Last year", description: "Only the most recent twelve months." },
            { label: "Last decade", description: "The ten years up to now." },
          ],
        },
      };
    }
    const v = outputValue(answer.output);
    const said = v && typeof v === "object" && "answer" in v ? String(v.answer) : JSON.stringify(v);
    return { kind: "text", chunks: chunked(`You answered: "${said}". Thanks, I will cover that.`) };
  }
  if (/\bapproval\b/.test(lower)) {
    const done = resultOf("publish_note");
    if (!done) {
      return {
        kind: "tool",
        toolName: "publish_note",
        input: { title: "Findings", body: `Notes on ${objective.slice(0, 120)}` },
      };
    }
    const out = done.output;
    const published = JSON.stringify(outputValue(out) ?? "").includes('"published":true');
    return {
      kind: "text",
      chunks: chunked(published ? "Published. The note is in the notebook." : "The note was not published."),
    };
  }
  const searched = resultOf("search");
  if (!searched) return { kind: "tool", toolName: "search", input: { query: objective.split("\n")[0].slice(0, 200) } };
  return { kind: "text", chunks: chunked(report(objective, sourcesIn(outputValue(searched.output)))) };
}

function usage(input: number, output: number) {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

// "retry" throws a plain error flagged retryable: the AI SDK retries only APICallError
// (silently, inside one attempt), while eve retries anything flagged isRetryable and
// records it as model.retried, which is what the tests want to see.
class ScriptedOverload extends Error {
  readonly isRetryable = true;
  readonly statusCode = 503;
}

const FAIL_AFTER_MS = 2000;

function fail(retryable: boolean): never {
  if (retryable) throw new ScriptedOverload("Scripted overload (retryable).");
  // A 400 from the provider: eve treats it as terminal and does not retry.
  throw new APICallError({
    message: "Scripted failure (not retryable).",
    url: "scripted://model",
    requestBodyValues: {},
    statusCode: 400,
    isRetryable: false,
  });
}

// Unique across server restarts too: eve keys calls by this id within a session.
function callId() {
  return `call_${randomBytes(6).toString("hex")}`;
}

function log(options: any, step: unknown) {
  const file = process.env.EVE_SCRIPTED_MODEL_LOG;
  if (!file) return;
  appendFileSync(file, JSON.stringify({ call: ++callCount, prompt: options.prompt, tools: options.tools?.map((t: any) => t.name), step }) + "\n");
}

function sleep(ms: number, signal?: AbortSignal) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason);
    }, { once: true });
  });
}

export const scriptedModel = {
  specificationVersion: "v4" as const,
  provider: "casebook-scripted",
  modelId: "scripted-1",
  supportedUrls: {},

  async doGenerate(options: any) {
    const step = decide(options.prompt);
    log(options, step);
    if (step.kind === "error") fail(step.retryable);
    const inTokens = JSON.stringify(options.prompt).length >> 2;
    if (step.kind === "tool") {
      return {
        content: [{ type: "tool-call", toolCallId: callId(), toolName: step.toolName, input: JSON.stringify(step.input) }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: usage(inTokens, 20),
        warnings: [],
      };
    }
    return {
      content: [{ type: "text", text: step.chunks.join("") }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: usage(inTokens, step.chunks.length),
      warnings: [],
    };
  },

  async doStream(options: any) {
    const step = decide(options.prompt);
    log(options, step.kind === "text" ? { ...step, chunks: step.chunks.length } : step);
    // eve deletes an ended session's history at once: a client that reads the stream
    // after that gets 410, so the end comes once a reader can be there to see it.
    if (step.kind === "error" && !step.retryable) await sleep(FAIL_AFTER_MS, options.abortSignal);
    if (step.kind === "error") fail(step.retryable);
    const signal: AbortSignal | undefined = options.abortSignal;
    const inTokens = JSON.stringify(options.prompt).length >> 2;
    const id = callId();
    let cancelled = false; // eve stopped reading (steering, cancel): stop producing
    const stream = new ReadableStream({
      cancel() {
        cancelled = true;
      },
      async start(controller) {
        try {
          controller.enqueue({ type: "stream-start", warnings: [] });
          controller.enqueue({ type: "response-metadata", modelId: "scripted-1", timestamp: new Date() });
          if (step.kind === "tool") {
            if (step.narration) {
              controller.enqueue({ type: "text-start", id: "t0" });
              for (const delta of step.narration) {
                if (step.delayMs) await sleep(step.delayMs, signal);
                if (cancelled) return;
                controller.enqueue({ type: "text-delta", id: "t0", delta });
              }
              controller.enqueue({ type: "text-end", id: "t0" });
            }
            const input = JSON.stringify(step.input);
            controller.enqueue({ type: "tool-input-start", id, toolName: step.toolName });
            controller.enqueue({ type: "tool-input-delta", id, delta: input });
            controller.enqueue({ type: "tool-input-end", id });
            controller.enqueue({ type: "tool-call", toolCallId: id, toolName: step.toolName, input });
            controller.enqueue({ type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: usage(inTokens, 20) });
          } else {
            controller.enqueue({ type: "text-start", id: "t0" });
            for (const delta of step.chunks) {
              if (step.delayMs) await sleep(step.delayMs, signal);
              if (cancelled) return;
              controller.enqueue({ type: "text-delta", id: "t0", delta });
            }
            controller.enqueue({ type: "text-end", id: "t0" });
            controller.enqueue({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usage(inTokens, step.chunks.length) });
          }
          controller.close();
        } catch (error) {
          controller.error(error);
        }
      },
    });
    return { stream };
  },
};
