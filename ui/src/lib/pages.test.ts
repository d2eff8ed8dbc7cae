import { describe, expect, it } from "vitest";
import { PageCache, forgetOldest } from "./pages";

describe("PageCache", () => {
  it("asks for the pages a viewport lacks, once", () => {
    const c = new PageCache<number>(10, 4);
    expect(c.missing(5, 25, 100)).toEqual([0, 1, 2]);
    c.markLoading(1);
    expect(c.missing(5, 25, 100)).toEqual([0, 2]);
    c.fill(1, Array.from({ length: 10 }, (_, i) => 10 + i));
    expect(c.get(13)).toBe(13);
    expect(c.missing(10, 20, 100)).toEqual([]);
    // Not past the end.
    expect(c.missing(95, 120, 100)).toEqual([9]);
  });

  it("keeps live items that extend what it holds, and refetches a short page", () => {
    const c = new PageCache<number>(10, 4);
    c.fill(0, [0, 1, 2]);
    c.put(3, 3);
    expect(c.get(3)).toBe(3);
    c.put(7, 7);
    expect(c.get(7)).toBeUndefined();
    // 8 exist, 4 held.
    expect(c.missing(0, 10, 8)).toEqual([0]);
    c.fill(0, [0, 1, 2, 3, 4, 5, 6, 7]);
    expect(c.missing(0, 10, 8)).toEqual([]);
    c.put(10, 10);
    // A live item starts the next page.
    expect(c.get(10)).toBe(10);
  });

  it("holds a bounded number of pages however long the timeline", () => {
    const c = new PageCache<number>(100, 5);
    for (let p = 0; p < 500; p++) {
      c.fill(p, Array.from({ length: 100 }, (_, i) => p * 100 + i));
      c.trim(p * 100);
    }
    expect(c.held()).toBe(500);
    expect(c.get(49_950)).toBe(49_950);
    // The first page stays, for a jump to the top; the ones next to it do not.
    expect(c.get(0)).toBe(0);
    expect(c.get(100)).toBeUndefined();
  });

  it("files items read from the end into the pages they span", () => {
    const c = new PageCache<number>(10, 4);
    // 25 items: the end read as positions 10 to 24, a whole page and a short one.
    c.fillFrom(10, Array.from({ length: 15 }, (_, i) => 10 + i));
    expect(c.missing(10, 25, 25)).toEqual([]);
    expect(c.missing(0, 25, 25)).toEqual([0]);
    expect([c.get(10), c.get(19), c.get(20), c.get(24)]).toEqual([10, 19, 20, 24]);
    expect(c.held()).toBe(15);
  });
});

describe("forgetOldest", () => {
  it("drops the first inserted entries beyond the limit", () => {
    const m = new Map([[1, "a"], [2, "b"], [3, "c"], [4, "d"]]);
    m.delete(1);
    m.set(1, "a again");
    forgetOldest(m, 2);
    expect([...m.keys()]).toEqual([4, 1]);
    forgetOldest(m, 5);
    expect(m.size).toBe(2);
  });
});
