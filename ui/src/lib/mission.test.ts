import { describe, expect, it } from "vitest";
import type { EventKind, MissionRecord, MissionStatus, StoredEvent } from "./bindings";
import {
  byActivity,
  estimateHeight,
  filterMissions,
  formatCents,
  formatDollars,
  formatElapsed,
  missionItem,
  missionRoute,
  parseUsd,
  sentAtOf,
  spendOf,
} from "./mission";

// Cards and labels come from Rust (core/src/cards.rs, tested there); these tests
// give each event a plain one.
function ev(event: string, data: unknown, seq = 1, kind: EventKind = "unknown"): StoredEvent {
  return {
    seq,
    event: { id: String(seq), event, kind, data },
    receivedAt: 0,
    label: event,
    card: { type: "raw", json: JSON.stringify(data) },
  };
}

describe("parseUsd", () => {
  it("reads dollars as cents, as Rust does", () => {
    expect(parseUsd("25")).toEqual({ cents: 2500 });
    expect(parseUsd("25.5")).toEqual({ cents: 2550 });
    expect(parseUsd(" $25.50 ")).toEqual({ cents: 2550 });
    expect(parseUsd(".5")).toEqual({ cents: 50 });
    expect(parseUsd("0.01")).toEqual({ cents: 1 });
  });
  it("says what is wrong", () => {
    for (const bad of ["", "$", "abc", "-5", "1,000", "1.2.3"]) {
      expect(parseUsd(bad), bad).toHaveProperty("problem", expect.stringMatching(/US dollars/));
    }
    expect(parseUsd("1.234")).toHaveProperty("problem", expect.stringMatching(/two decimals/));
    expect(parseUsd("0.00")).toHaveProperty("problem", expect.stringMatching(/more than \$0.00/));
  });
});

describe("formatting", () => {
  it("formats money and time", () => {
    expect(formatCents(2550)).toBe("$25.50");
    expect(formatCents(7)).toBe("$0.07");
    expect(formatDollars(1.5)).toBe("$1.50");
    expect(formatDollars(0.105)).toBe("$0.11");
    expect(formatElapsed(12_400)).toBe("12 s");
    expect(formatElapsed(75_000)).toBe("1 min 15 s");
    expect(formatElapsed(3_720_000)).toBe("1 h 02 min");
    expect(formatElapsed(-5)).toBe("0 s");
  });
  it("routes mission windows by the hash", () => {
    expect(missionRoute("#/mission/ses_0a1b")).toBe("ses_0a1b");
    expect(missionRoute("#/mission/a%2Fb")).toBe("a/b");
    expect(missionRoute("")).toBeNull();
    expect(missionRoute("#/mission/")).toBeNull();
    expect(missionRoute("#/mission/%E0%A4%A")).toBeNull();
    expect(missionRoute("#/mission/ses_0a1b?item=12")).toBe("ses_0a1b");
    expect(missionItem("#/mission/ses_0a1b?item=12")).toBe(12);
    expect(missionItem("#/mission/ses_0a1b")).toBeNull();
  });
  it("list the running and waiting missions first, then by last activity", () => {
    const m = (sessionId: string, status: MissionStatus, updatedAt: number) =>
      ({ sessionId, status, updatedAt }) as MissionRecord;
    const list = [
      m("old-done", "complete", 10),
      m("new-done", "complete", 50),
      m("asking", "needs_input", 5),
      m("running", "running", 20),
      m("failed", "failed", 40),
    ];
    expect(byActivity(list).map((x) => x.sessionId)).toEqual(["running", "asking", "new-done", "failed", "old-done"]);
    expect(filterMissions(list, "active").map((x) => x.sessionId)).toEqual(["asking", "running"]);
    expect(filterMissions(list, "complete").map((x) => x.sessionId)).toEqual(["old-done", "new-done"]);
    expect(filterMissions(list, "all")).toHaveLength(5);
  });
});

describe("layout", () => {
  it("estimates taller cards for longer content", () => {
    const short = estimateHeight({ type: "plan", steps: ["a"] });
    const long = estimateHeight({ type: "plan", steps: ["a", "b", "c", "d"] });
    expect(long).toBeGreaterThan(short);
    const raw = estimateHeight({ type: "raw", json: "x\n".repeat(1000) });
    expect(raw).toBeLessThanOrEqual(58 + 240);
    expect(estimateHeight({ type: "text", text: "a\nb\nc" })).toBeGreaterThan(estimateHeight({ type: "text", text: "a" }));
  });
});

describe("stamps", () => {
  const a = ev("search.query", { query: "Urban HEAT" }, 1);
  it("reads spend and sentAt stamps", () => {
    expect(spendOf(ev("spend.updated", { spentUsd: 2, budgetUsd: 5 }, 3, "spend_updated"))).toEqual({
      spent: 2,
      budget: 5,
    });
    expect(spendOf(a)).toBeNull();
    expect(sentAtOf(ev("plan", { sentAt: 123 }))).toBe(123);
    expect(sentAtOf(ev("plan", "x"))).toBeNull();
  });
});
