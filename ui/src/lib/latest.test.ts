import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Latest } from "./latest";

/** A service whose answers the test releases one by one, in any order. */
function service() {
  const asked: string[] = [];
  const open = new Map<string, (a: string) => void>();
  const ask = (q: string) =>
    new Promise<string>((resolve) => {
      asked.push(q);
      open.set(q, resolve);
    });
  const release = async (q: string) => {
    open.get(q)!(`answer to ${q}`);
    open.delete(q);
    await Promise.resolve();
    await Promise.resolve();
  };
  return { asked, ask, release };
}

describe("Latest", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("asks at each keystroke with no wait, and draws the answer", async () => {
    const s = service();
    const drawn: string[] = [];
    const latest = new Latest(s.ask, (a) => drawn.push(a), () => {}, () => 0);
    latest.request("h");
    expect(s.asked).toEqual(["h"]);
    await s.release("h");
    expect(drawn).toEqual(["answer to h"]);
    latest.request("he");
    expect(s.asked).toEqual(["h", "he"]);
  });

  it("keeps one question in flight: those typed past meanwhile are never sent, and the out-of-date answer is not drawn", async () => {
    const s = service();
    const drawn: string[] = [];
    const latest = new Latest(s.ask, (a) => drawn.push(a), () => {}, () => 0);
    latest.request("h");
    latest.request("he");
    latest.request("hea");
    latest.request("heat");
    expect(s.asked).toEqual(["h"]);
    expect(latest.pending).toBe(true);
    await s.release("h");
    expect(drawn).toEqual([]);
    expect(s.asked).toEqual(["h", "heat"]);
    await s.release("heat");
    expect(drawn).toEqual(["answer to heat"]);
    expect(latest.pending).toBe(false);
  });

  it("with a wait, asks only once typing pauses that long (the old behaviour, kept as a reference)", async () => {
    const s = service();
    const drawn: string[] = [];
    const latest = new Latest(s.ask, (a) => drawn.push(a), () => {}, () => 150);
    latest.request("h");
    vi.advanceTimersByTime(100);
    latest.request("he");
    vi.advanceTimersByTime(149);
    expect(s.asked).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(s.asked).toEqual(["he"]);
    await s.release("he");
    expect(drawn).toEqual(["answer to he"]);
  });

  it("cancel drops the answer still to come, and a failure is said only for the newest question", async () => {
    const s = service();
    const drawn: string[] = [];
    const failed: unknown[] = [];
    const latest = new Latest(s.ask, (a) => drawn.push(a), (e) => failed.push(e), () => 0);
    latest.request("x");
    latest.cancel();
    await s.release("x");
    expect(drawn).toEqual([]);
    const failing = new Latest(
      (q: string) => Promise.reject(new Error(q)),
      () => {},
      (e) => failed.push((e as Error).message),
      () => 0,
    );
    failing.request("bad");
    await Promise.resolve();
    await Promise.resolve();
    expect(failed).toEqual(["bad"]);
  });
});
