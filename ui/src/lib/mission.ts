// Missions in the UI: the composer's checks, the route of a mission window, and the
// timeline's layout and filter. How an event reads (its card and label) comes from
// Rust with the event. Pure functions, tested in mission.test.ts.
import type { Card, MissionRecord, MissionStatus, StoredEvent } from "./bindings";

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

/** The session id of a mission window (`#/mission/<id>`, maybe `?item=<n>`), or null in the main window. */
export function missionRoute(hash: string): string | null {
  const m = /^#\/mission\/([^/?#]+)(\?item=\d+)?$/.exec(hash);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
}

/** The item a mission window opens at (`#/mission/<id>?item=<n>`: a search hit), or null. */
export function missionItem(hash: string): number | null {
  const m = /\?item=(\d+)$/.exec(hash);
  return m ? Number(m[1]) : null;
}

/** Missions that run or wait on the person: at the top of the list. */
export const ACTIVE: MissionStatus[] = ["running", "reconnecting", "needs_input", "waiting"];

/** The Missions list's order: the active ones first, then by last activity, newest first. */
export function byActivity(missions: MissionRecord[]): MissionRecord[] {
  const active = (m: MissionRecord) => (ACTIVE.includes(m.status) ? 0 : 1);
  return [...missions].sort((a, b) => active(a) - active(b) || b.updatedAt - a.updatedAt);
}

/** The missions a filter keeps: every one, the active ones, or those of one status. */
export function filterMissions(missions: MissionRecord[], filter: MissionStatus | "all" | "active"): MissionRecord[] {
  if (filter === "all") return missions;
  if (filter === "active") return missions.filter((m) => ACTIVE.includes(m.status));
  return missions.filter((m) => m.status === filter);
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
  waiting: "Waiting for you",
  needs_input: "Needs your answer",
  complete: "Complete",
  failed: "Failed",
  cancelled: "Cancelled",
  reconnecting: "Reconnecting…",
  lost: "Connection lost",
  error: "Error",
  expired: "History expired",
};

type Obj = Record<string, unknown>;

const num = (o: Obj, k: string): number | null =>
  typeof o[k] === "number" && Number.isFinite(o[k]) ? (o[k] as number) : null;

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
    case "text":
      return base + 20 * Math.min(12, card.text.split("\n").length);
    default:
      return base + 10;
  }
}

/** The latest spend an event reports, in dollars. */
export function spendOf(ev: StoredEvent): { spent: number; budget: number | null } | null {
  if (ev.event.kind !== "spend_updated") return null;
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

/** Spend as a mission reported it: dollars spent, and the budget it named. */
export type Spend = { spent: number; budget: number | null };

/** What the mission window's header shows of the whole mission, from its timeline at
 *  most four times a second: the latest spend, when the last event came, how many. */
export type Facts = { spend: Spend | null; lastAt: number | null; count: number };

