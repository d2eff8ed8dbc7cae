import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FIREHOSE, Pacer, RateMeter } from "./pacer";

describe("Pacer", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function paced(gap: number) {
    const draws: number[] = [];
    const pacer = new Pacer(gap, () => draws.push(Date.now()), () => Date.now());
    return { pacer, draws };
  }

  it("draws at once after a quiet spell", () => {
    const { pacer, draws } = paced(25);
    const t0 = Date.now();
    pacer.request();
    expect(draws).toEqual([t0]);
    vi.advanceTimersByTime(100);
    pacer.request();
    expect(draws).toEqual([t0, t0 + 100]);
  });

  it("says whether a draw is waiting", () => {
    const { pacer, draws } = paced(25);
    pacer.request();
    expect(pacer.waiting).toBe(false);
    pacer.request();
    expect(pacer.waiting).toBe(true);
    vi.advanceTimersByTime(25);
    expect(pacer.waiting).toBe(false);
    expect(draws).toHaveLength(2);
    pacer.request();
    pacer.cancel();
    expect(pacer.waiting).toBe(false);
  });

  it("draws now when told, in place of the draw that was waiting", () => {
    const { pacer, draws } = paced(250);
    const t0 = Date.now();
    pacer.request();
    vi.advanceTimersByTime(10);
    pacer.request();
    pacer.drawNow();
    expect(draws).toEqual([t0, t0 + 10]);
    vi.advanceTimersByTime(1000);
    expect(draws).toHaveLength(2);
  });

  it("makes a burst of asks within the gap one draw, when the gap is over", () => {
    const { pacer, draws } = paced(25);
    const t0 = Date.now();
    pacer.request();
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(2);
      pacer.request();
    }
    expect(draws).toEqual([t0]);
    vi.advanceTimersByTime(5);
    expect(draws).toEqual([t0, t0 + 25]);
    vi.advanceTimersByTime(100);
    expect(draws).toHaveLength(2);
  });

  it("never draws more often than the gap however fast asks come", () => {
    const { pacer, draws } = paced(25);
    for (let i = 0; i < 1000; i++) {
      pacer.request();
      vi.advanceTimersByTime(1);
    }
    vi.advanceTimersByTime(25);
    const gaps = draws.slice(1).map((t, i) => t - draws[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(25);
    // Nothing asked for is left undrawn: the last ask (at 999 ms) was drawn.
    expect(draws.at(-1)).toBeGreaterThanOrEqual(draws[0]! + 999);
    expect(draws.length).toBeGreaterThanOrEqual(38);
  });

  it("drops a waiting draw when cancelled", () => {
    const { pacer, draws } = paced(25);
    pacer.request();
    pacer.request();
    pacer.cancel();
    vi.advanceTimersByTime(100);
    expect(draws).toHaveLength(1);
  });
});

describe("a Pacer told of what arrives", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("draws a stream past FIREHOSE a second its firehose gap apart, and a slow one as before", () => {
    const draws: number[] = [];
    const pacer = new Pacer(25, () => draws.push(Date.now()), () => Date.now(), 75);
    // 40 a second: the usual gap.
    for (let i = 0; i < 40; i++) {
      pacer.arrived(1);
      vi.advanceTimersByTime(25);
    }
    const slow = draws.slice(1).map((t, i) => t - draws[i]!);
    expect(Math.max(...slow)).toBe(25);
    // 8 every 38 ms, about 210 a second, as the follower's batches come at 200 events a second.
    draws.length = 0;
    for (let i = 0; i < 60; i++) {
      pacer.arrived(8);
      vi.advanceTimersByTime(38);
    }
    const fast = draws.slice(-10).map((t, i, all) => (i === 0 ? NaN : t - all[i - 1]!)).slice(1);
    expect(Math.min(...fast)).toBeGreaterThanOrEqual(75);
    expect(FIREHOSE).toBe(100);
  });
});

describe("RateMeter", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("says about how many arrive a second, and forgets a stream that stopped", () => {
    const meter = new RateMeter(() => Date.now());
    expect(meter.perSecond()).toBe(0);
    // 200 a second, in batches of 8 every 40 ms, for three seconds.
    for (let i = 0; i < 75; i++) {
      meter.add(8);
      vi.advanceTimersByTime(40);
    }
    expect(meter.perSecond()).toBeGreaterThan(150);
    expect(meter.perSecond()).toBeLessThan(250);
    vi.advanceTimersByTime(5000);
    expect(meter.perSecond()).toBeLessThan(2);
  });
});
