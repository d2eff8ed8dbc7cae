// A scripted AI SDK language model for offline tests of a real eve server.
//
// No network, no API key: every reply is decided from the prompt eve sends.
// The first user message holds "MISSION OBJECTIVE: <objective>"; words in it
// choose the scenario:
//   (default)  call `search`, then stream a Markdown report citing its sources
//   question   call `ask_question` with two options (input shaped after the
//              tool schema the release offers), then quote the answer
//   approval   call `publish` (a tool that needs approval); reply differs on
//              approve / deny
//   delegate   call the declared subagent `researcher`, then report
//   slow [N]   stream one delta per 200 ms for N seconds (~60 s), honouring abortSignal
// Any later user message gets "You said: <words>".
//
// Used unchanged by tests/eve-agent-0.80.1, -0.64.1 and -0.30.8 (eve 0.80.1,
// 0.64.1, 0.30.8 with ai 7); what each release feeds it is noted where it
// matters below and in tests/eve-agent-old-WIRE.md.
//
// The module has no imports so it can be copied between eve releases; only
// `specificationVersion` differs between AI SDK majors ('v2' for ai 5, 'v3'
// for ai 6 and 7; ai 7 also accepts its own 'v4').
//
// Set EVE_SCRIPT_LOG=/path/file.jsonl to append every prompt the model sees,
// which is how the prompt shapes below were found.

type Part = { type: string; [key: string]: any };
type Message = { role: string; content: string | Part[] };

export type ScriptRole = "root" | "researcher";

const SLOW_DELTAS = 300; // 300 x 200 ms = 60 s
const SLOW_INTERVAL_MS = 200;

export const SOURCES = [
  { title: "Example source one", url: "https://example.org/source-one", snippet: "First fake finding." },
  { title: "Example source two", url: "https://example.org/source-two", snippet: "Second fake finding." },
];

function textOf(message: Message): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .filter((part) => part.type === "text")
    .map((part) => String(part.text))
    .join("\n");
}

function toolResults(messages: Message[]): Part[] {
  const out: Part[] = [];
  for (const message of messages) {
    if (message.role !== "tool" || typeof message.content === "string") continue;
    for (const part of message.content) if (part.type === "tool-result") out.push(part);
  }
  return out;
}

function toolCalls(messages: Message[]): Part[] {
  const out: Part[] = [];
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const part of message.content) if (part.type === "tool-call") out.push(part);
  }
  return out;
}

/** The value a tool result carries, whatever output shape this AI SDK uses. */
function outputValue(result: Part): any {
  const output = result.output ?? result.result;
  if (output && typeof output === "object" && "type" in output) {
    if (output.type === "json" || output.type === "text" || output.type === "error-text" || output.type === "error-json") {
      return output.value;
    }
    return output; // e.g. { type: "execution-denied", reason }
  }
  return output;
}

let counter = 0;
function callId(): string {
  counter += 1;
  return `call_${Date.now().toString(36)}_${counter}`;
}

/** What the model does on one call. */
type Plan =
  | { kind: "text"; chunks: string[]; delayMs?: number }
  | { kind: "tool"; toolName: string; input: unknown };

function chunk(text: string): string[] {
  // Split on spaces keeping them, so the stream carries several deltas.
  return text.match(/\S+\s*|\s+/g) ?? [text];
}

function report(title: string, lines: string[]): string {
  const sources = SOURCES.map((s) => `- [${s.title}](${s.url})`).join("\n");
  return `# ${title}\n\n${lines.join("\n\n")}\n\n## Sources\n\n${sources}\n`;
}

/**
 * Notes eve itself writes into the prompt as user messages: bracketed blocks
 * ("[Tasks]", "[Task state]", "[Agents]", "[Pending approvals]"), a finished
 * task's "<task_result ...>" (0.80.1), and the background-task reports of
 * 0.64.1 ("Background task reporting...", "Background task <id> ... is
 * completed."). They are not the person's words.
 */
export function isFrameworkNote(text: string): boolean {
  return /^\[[A-Za-z][A-Za-z ]*\]\n/.test(text) || /^<task_result\b/.test(text) || /^Background task /.test(text);
}

/** Top-level input property names of a tool offered in this call. */
function inputKeys(tools: any[] | undefined, name: string): string[] {
  const tool = (tools ?? []).find((t) => t.name === name);
  return Object.keys(tool?.inputSchema?.properties ?? {});
}

export function plan(prompt: Message[], role: ScriptRole, tools?: any[]): Plan {
  const userIndexes = prompt.flatMap((m, i) => (m.role === "user" && !isFrameworkNote(textOf(m)) ? [i] : []));
  const missionAt = userIndexes.find((i) => textOf(prompt[i]).includes("MISSION OBJECTIVE:"));
  // No mission in the history (0.30.8 drops a cancelled first turn's input):
  // every user message is then a later one.
  if (role === "root" && missionAt === undefined && userIndexes.length > 0) {
    return { kind: "text", chunks: chunk(`You said: ${textOf(prompt[userIndexes[userIndexes.length - 1]]).trim()}`) };
  }
  const missionIndex = missionAt ?? userIndexes[0] ?? 0;
  const mission = textOf(prompt[missionIndex] ?? { role: "user", content: "" });
  // A subagent's first message wraps the caller's words after "Caller message:".
  const callerMessage = mission.split("Caller message:\n")[1];
  const objective = (mission.split("MISSION OBJECTIVE:")[1] ?? callerMessage ?? mission).trim();
  const words = objective.toLowerCase();
  const after = prompt.slice(missionIndex + 1);
  const results = toolResults(after);
  const calls = toolCalls(after);

  // A later user message (a follow-up, or a steer) gets an echo, once: only
  // while no assistant text has answered it yet.
  const lastUser = userIndexes[userIndexes.length - 1];
  if (lastUser !== undefined && lastUser > missionIndex) {
    const answered = prompt
      .slice(lastUser + 1)
      .some((m) => m.role === "assistant" && typeof m.content !== "string" && m.content.some((p) => p.type === "text"));
    if (!answered) return { kind: "text", chunks: chunk(`You said: ${textOf(prompt[lastUser]).trim()}`) };
  }

  const resultOf = (name: string) => results.find((r) => r.toolName === name);

  if (role === "researcher") {
    if (!resultOf("search")) return { kind: "tool", toolName: "search", input: { query: objective } };
    return {
      kind: "text",
      chunks: chunk(`Researcher findings about "${objective}": ${SOURCES.map((s) => s.url).join(", ")}.`),
    };
  }

  if (/\bslow\b/.test(words)) {
    // "slow N": about N seconds.
    const seconds = /\bslow\s+(\d+)/.exec(words);
    const count = seconds ? Math.round((Number(seconds[1]) * 1000) / SLOW_INTERVAL_MS) : SLOW_DELTAS;
    const chunks = Array.from({ length: count }, (_, i) => `tick ${i + 1}. `);
    return { kind: "text", chunks, delayMs: SLOW_INTERVAL_MS };
  }

  if (/\bquestion\b/.test(words)) {
    const answered = resultOf("ask_question");
    if (!answered) {
      // ask_question's input differs between releases: 0.80.1 takes
      // { question, options: [{ label, description }] }, 0.64.1 takes
      // { prompt, options: [{ id, label, description }], allowFreeform }.
      const input = inputKeys(tools, "ask_question").includes("prompt")
        ? {
            prompt: "Which scope should the research cover?",
            options: [
              { id: "broad", label: "Broad", description: "Cover the whole field." },
              { id: "narrow", label: "Narrow", description: "Cover only the core question." },
            ],
            allowFreeform: true,
          }
        : {
            question: "Which scope should the research cover?",
            options: [
              { label: "Broad", description: "Cover the whole field." },
              { label: "Narrow", description: "Cover only the core question." },
            ],
          };
      return { kind: "tool", toolName: "ask_question", input };
    }
    const value = outputValue(answered);
    // { status, answer } (0.80.1) or { status, optionId?, text? } (0.64.1,
    // where an option answer names the option's id: quote its label).
    const asked = calls.find((c) => c.toolName === "ask_question");
    const askedInput = typeof asked?.input === "string" ? JSON.parse(asked.input) : asked?.input;
    const label = (id: unknown) => askedInput?.options?.find((o: any) => o.id === id)?.label ?? id;
    const answer =
      value && typeof value === "object"
        ? (value.answer ?? value.text ?? (value.optionId !== undefined ? label(value.optionId) : JSON.stringify(value)))
        : JSON.stringify(value);
    return { kind: "text", chunks: chunk(`You answered: "${answer}". Proceeding with that scope.`) };
  }

  if (/\bapproval\b/.test(words)) {
    const done = resultOf("publish");
    if (!done) return { kind: "tool", toolName: "publish", input: { title: objective } };
    const value = outputValue(done);
    const denied =
      (value && typeof value === "object" && value.type === "execution-denied") ||
      (done.output && done.output.type === "execution-denied");
    return {
      kind: "text",
      chunks: chunk(denied ? "Publication was denied; nothing was published." : "Published the report after approval."),
    };
  }

  if (/\bdelegate\b/.test(words)) {
    const asked = calls.find((c) => c.toolName === "researcher");
    if (!asked) {
      return { kind: "tool", toolName: "researcher", input: { message: `Research: ${objective}` } };
    }
    // The researcher's reply reaches the parent as a tool result, or (when
    // the call runs as a task) as a later "<task_result>" user message after
    // a receipt; until then say so and end the step.
    const text = after.map(textOf).join("\n") + JSON.stringify(results.map(outputValue));
    if (!text.includes("Researcher findings")) {
      return { kind: "text", chunks: chunk("Waiting for the researcher.") };
    }
    return { kind: "text", chunks: chunk(report("Delegated report", [`The researcher looked into: ${objective}.`])) };
  }

  if (!resultOf("search")) return { kind: "tool", toolName: "search", input: { query: objective } };
  return { kind: "text", chunks: chunk(report("Research report", [`Objective: ${objective}.`, "Two sources agree."])) };
}

function usage() {
  return {
    inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 10, text: 10, reasoning: 0 },
  };
}

function abortError(): Error {
  const error = new Error("The operation was aborted.");
  error.name = "AbortError";
  return error;
}

function log(role: ScriptRole, options: any) {
  const file = process.env.EVE_SCRIPT_LOG;
  if (!file) return;
  // Dynamic import keeps the module free of static imports.
  import("node:fs").then((fs) =>
    fs.appendFileSync(
      file,
      JSON.stringify({ at: new Date().toISOString(), role, tools: (options.tools ?? []).map((t: any) => t.name), prompt: options.prompt }) + "\n",
    ),
  );
}

export function scriptedModel(role: ScriptRole = "root", specificationVersion: "v2" | "v3" | "v4" = "v3"): any {
  return {
    specificationVersion,
    provider: "casebook-scripted",
    modelId: `scripted-${role}`,
    supportedUrls: {},
    async doGenerate(options: any) {
      log(role, options);
      const p = plan(options.prompt, role, options.tools);
      const content =
        p.kind === "text"
          ? [{ type: "text", text: p.chunks.join("") }]
          : [{ type: "tool-call", toolCallId: callId(), toolName: p.toolName, input: JSON.stringify(p.input) }];
      const finishReason = p.kind === "text" ? "stop" : "tool-calls";
      return {
        content,
        finishReason: specificationVersion === "v2" ? finishReason : { unified: finishReason, raw: finishReason },
        usage: specificationVersion === "v2" ? { inputTokens: 10, outputTokens: 10, totalTokens: 20 } : usage(),
        warnings: [],
      };
    },
    async doStream(options: any) {
      log(role, options);
      const p = plan(options.prompt, role, options.tools);
      const signal: AbortSignal | undefined = options.abortSignal;
      const finish = (reason: string) => ({
        type: "finish",
        finishReason: specificationVersion === "v2" ? reason : { unified: reason, raw: reason },
        usage: specificationVersion === "v2" ? { inputTokens: 10, outputTokens: 10, totalTokens: 20 } : usage(),
      });
      const parts: any[] = [{ type: "stream-start", warnings: [] }];
      if (p.kind === "tool") {
        const id = callId();
        const input = JSON.stringify(p.input);
        parts.push(
          { type: "tool-input-start", id, toolName: p.toolName },
          { type: "tool-input-delta", id, delta: input },
          { type: "tool-input-end", id },
          { type: "tool-call", toolCallId: id, toolName: p.toolName, input },
          finish("tool-calls"),
        );
      } else {
        parts.push({ type: "text-start", id: "t0" });
        for (const delta of p.chunks) parts.push({ type: "text-delta", id: "t0", delta });
        parts.push({ type: "text-end", id: "t0" }, finish("stop"));
      }
      const delayMs = p.kind === "text" ? (p.delayMs ?? 0) : 0;
      let index = 0;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let wake: (() => void) | undefined;
      const stream = new ReadableStream({
        start(controller) {
          if (signal?.aborted) return controller.error(abortError());
          signal?.addEventListener("abort", () => {
            if (timer) clearTimeout(timer);
            wake?.();
            try {
              controller.error(abortError());
            } catch {}
          });
        },
        async pull(controller) {
          if (signal?.aborted) return;
          const part = parts[index++];
          if (!part) return controller.close();
          if (delayMs > 0 && part.type === "text-delta") {
            await new Promise<void>((resolve) => {
              wake = resolve;
              timer = setTimeout(resolve, delayMs);
            });
            if (signal?.aborted) return;
          }
          controller.enqueue(part);
        },
        cancel() {
          if (timer) clearTimeout(timer);
        },
      });
      return { stream };
    },
  };
}
