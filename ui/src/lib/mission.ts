// Missions in the UI: the composer's checks, the route of a mission window, and
// how each event of the timeline reads. Pure functions, tested in mission.test.ts.
import type { MissionStatus, StoredEvent } from "./bindings";

/** Cents from what a person types as US dollars: `25`, `25.5`, `$25.50`. Rust checks again. */
export function parseUsd(raw: string): { cents: number } | { problem: string } {
  const s = raw.trim().replace(/^\$/, "").trim();
  if (s === "") return { problem: "Enter the budget in US dollars, like 25 or 25.50." };
  const m = /^(\d*)(?:\.(\d*))?$/.exec(s);
  if (!m || (m[1] === "" && (m[2] ?? "") === "")) {
    return { problem: "Enter the budget in US dollars, like 25 or 25.50." };
  }
  const frac = m[2] ?? "";
  if (frac.length > 2) return { problem: "At most two decimals: the budget is in cents." };
  const cents = Number(m[1] || "0") * 100 + Number(frac.padEnd(2, "0"));
  if (!Number.isSafeInteger(cents)) return { problem: "That budget is too large." };
  if (cents === 0) return { problem: "The budget must be more than $0.00." };
  return { cents };
}

/** `2550` → `$25.50`. */
export function formatCents(cents: number): string {
  const whole = Math.floor(cents / 100);
  return `$${whole}.${String(cents % 100).padStart(2, "0")}`;
}

/** A JSON number of dollars as the service sends it: `1.5` → `$1.50`. */
export function formatDollars(value: number): string {
  if (!Number.isFinite(value) || value < 0) return `$${value}`;
  return formatCents(Math.round(value * 100));
}

/** The session id of a mission window (`#/mission/<id>`), or null in the main window. */
export function missionRoute(hash: string): string | null {
  const m = /^#\/mission\/([^/?#]+)$/.exec(hash);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
}

/** `75_000` → `1 min 15 s`. */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

export const statusLabel: Record<MissionStatus, string> = {
  running: "Running",
  waiting: "Waiting",
  complete: "Complete",
  cancelled: "Cancelled",
  reconnecting: "Reconnecting…",
  error: "Error",
};

/** What a card shows for one event. `raw` is for kinds Casebook does not know, or data of another shape. */
export type Card =
  | { type: "started"; objective: string | null; budget: string | null }
  | { type: "plan"; steps: string[] }
  | { type: "search"; query: string; engine: string | null }
  | { type: "source"; title: string; url: string | null; publisher: string | null; year: string | null }
  | { type: "evidence"; quote: string | null; supports: string | null; url: string | null }
  | { type: "finding"; claim: string; confidence: string | null; sources: string[] }
  | { type: "spend"; text: string }
  | { type: "report"; title: string | null; summary: string | null; findings: string[] }
  | { type: "note"; text: string }
  | { type: "raw"; json: string };

type Obj = Record<string, unknown>;

const str = (o: Obj, k: string): string | null => (typeof o[k] === "string" ? (o[k] as string) : null);
const num = (o: Obj, k: string): number | null =>
  typeof o[k] === "number" && Number.isFinite(o[k]) ? (o[k] as number) : null;
const strings = (o: Obj, k: string): string[] | null =>
  Array.isArray(o[k]) && (o[k] as unknown[]).every((x) => typeof x === "string") ? (o[k] as string[]) : null;

export function prettyJson(data: unknown): string {
  try {
    return JSON.stringify(data, null, 2) ?? String(data);
  } catch {
    return String(data);
  }
}

/** How one event reads. Never throws; anything unexpected becomes a raw card. */
export function cardFor(ev: StoredEvent): Card {
  const raw: Card = { type: "raw", json: prettyJson(ev.event.data) };
  const d = ev.event.data;
  if (typeof d !== "object" || d === null || Array.isArray(d)) return raw;
  const o = d as Obj;
  switch (ev.event.event) {
    case "turn.started": {
      const b = num(o, "budgetUsd");
      return { type: "started", objective: str(o, "objective"), budget: b === null ? null : formatDollars(b) };
    }
    case "plan": {
      const steps = strings(o, "steps");
      return steps ? { type: "plan", steps } : raw;
    }
    case "search.query": {
      const query = str(o, "query");
      return query === null ? raw : { type: "search", query, engine: str(o, "engine") };
    }
    case "source.found": {
      const year = typeof o.year === "number" || typeof o.year === "string" ? String(o.year) : null;
      const title = str(o, "title");
      const url = str(o, "url");
      if (title === null && url === null) return raw;
      return { type: "source", title: title ?? url ?? "", url, publisher: str(o, "publisher"), year };
    }
    case "evidence": {
      const quote = str(o, "quote");
      const supports = str(o, "supports");
      if (quote === null && supports === null) return raw;
      return { type: "evidence", quote, supports, url: str(o, "sourceUrl") };
    }
    case "finding.verified": {
      const claim = str(o, "claim");
      if (claim === null) return raw;
      const c = num(o, "confidence");
      return {
        type: "finding",
        claim,
        confidence: c === null ? null : `${Math.round(c * 100)}%`,
        sources: strings(o, "sources") ?? [],
      };
    }
    case "spend.updated": {
      const spent = num(o, "spentUsd");
      if (spent === null) return raw;
      const budget = num(o, "budgetUsd");
      return {
        type: "spend",
        text: budget === null ? formatDollars(spent) : `${formatDollars(spent)} of ${formatDollars(budget)}`,
      };
    }
    case "report.final": {
      const title = str(o, "title");
      const summary = str(o, "summary");
      if (title === null && summary === null) return raw;
      return { type: "report", title, summary, findings: strings(o, "findings") ?? [] };
    }
    case "turn.completed":
      return { type: "note", text: "The turn is complete." };
    case "turn.cancelled": {
      const r = str(o, "reason");
      return { type: "note", text: `The turn was cancelled${r ? ` (${r})` : ""}.` };
    }
    case "session.waiting": {
      const r = str(o, "reason");
      return { type: "note", text: r === "awaiting_input" ? "Waiting for your input." : `Waiting${r ? ` (${r})` : ""}.` };
    }
    case "session.completed":
    case "session.complete":
    case "session.done": {
      const t = str(o, "reportTitle");
      return { type: "note", text: t ? `Mission complete: ${t}` : "Mission complete." };
    }
    default:
      return raw;
  }
}

/** The heading of an event's card. */
export function cardLabel(name: string): string {
  const known: Record<string, string> = {
    "turn.started": "Turn started",
    plan: "Plan",
    "search.query": "Search",
    "source.found": "Source",
    evidence: "Evidence",
    "finding.verified": "Finding verified",
    "spend.updated": "Spend",
    "report.final": "Report",
    "turn.completed": "Turn completed",
    "turn.cancelled": "Turn cancelled",
    "session.waiting": "Session waiting",
    "session.completed": "Session complete",
  };
  return known[name] ?? name;
}

/** A first guess at a card's height, before it is measured: close guesses keep the scrollbar steady. */
export function estimateHeight(card: Card): number {
  const base = 58;
  switch (card.type) {
    case "plan":
      return base + 22 * card.steps.length;
    case "source":
      return base + 40;
    case "evidence":
      return base + 70;
    case "finding":
      return base + 30 + 20 * card.sources.length;
    case "report":
      return base + 90 + 22 * card.findings.length;
    case "raw":
      return base + Math.min(240, 18 * card.json.split("\n").length);
    default:
      return base + 10;
  }
}

const searchText = new WeakMap<StoredEvent, string>();

/** Whether an event passes the timeline's filter: its kind (empty: all) and words anywhere in it. */
export function matches(ev: StoredEvent, kind: string, needle: string): boolean {
  if (kind !== "" && ev.event.event !== kind) return false;
  const n = needle.trim().toLowerCase();
  if (n === "") return true;
  let text = searchText.get(ev);
  if (text === undefined) {
    text = `${ev.event.event} ${typeof ev.event.data === "string" ? ev.event.data : JSON.stringify(ev.event.data)}`.toLowerCase();
    searchText.set(ev, text);
  }
  return text.includes(n);
}

/** The latest spend an event reports, in dollars. */
export function spendOf(ev: StoredEvent): { spent: number; budget: number | null } | null {
  if (ev.event.event !== "spend.updated") return null;
  const d = ev.event.data;
  if (typeof d !== "object" || d === null) return null;
  const spent = num(d as Obj, "spentUsd");
  return spent === null ? null : { spent, budget: num(d as Obj, "budgetUsd") };
}

/** The `sentAt` stamp (Unix ms) the sandbox puts in each event, for latency figures. */
export function sentAtOf(ev: StoredEvent): number | null {
  const d = ev.event.data;
  if (typeof d !== "object" || d === null) return null;
  return num(d as Obj, "sentAt");
}
