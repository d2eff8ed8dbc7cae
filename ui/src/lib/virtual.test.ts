import { describe, expect, it } from "vitest";
import { Rows, VirtualIndex, atBottom, endUncovered, fixedRowsInView } from "./virtual";

function filled(heights: number[]): VirtualIndex {
  const v = new VirtualIndex();
  for (const h of heights) v.push(h);
  return v;
}

describe("VirtualIndex", () => {
  it("keeps running offsets and the total", () => {
    const v = filled([10, 20, 30]);
    expect(v.length).toBe(3);
    expect([0, 1, 2, 3].map((i) => v.offsetOf(i))).toEqual([0, 10, 30, 60]);
    expect(v.total()).toBe(60);
  });

  it("finds the item at a height, clamped to the list", () => {
    const v = filled([10, 20, 30]);
    expect(v.indexAt(-5)).toBe(0);
    expect(v.indexAt(0)).toBe(0);
    expect(v.indexAt(9.9)).toBe(0);
    expect(v.indexAt(10)).toBe(1);
    expect(v.indexAt(59)).toBe(2);
    expect(v.indexAt(1000)).toBe(2);
    expect(new VirtualIndex().indexAt(10)).toBe(0);
  });

  it("moves later offsets when a measured height changes", () => {
    const v = filled([10, 10, 10, 10]);
    expect(v.total()).toBe(40);
    expect(v.set(1, 25)).toBe(true);
    expect(v.set(1, 25)).toBe(false);
    expect(v.set(9, 25)).toBe(false);
    expect(v.offsetOf(1)).toBe(10);
    expect(v.offsetOf(2)).toBe(35);
    expect(v.total()).toBe(55);
  });

  it("shows only the items in the viewport, plus overscan", () => {
    const v = filled(Array.from({ length: 100 }, () => 50));
    expect(v.range(0, 200, 0)).toEqual({ start: 0, end: 5 });
    expect(v.range(1000, 200, 0)).toEqual({ start: 20, end: 25 });
    expect(v.range(1000, 200, 3)).toEqual({ start: 17, end: 28 });
    expect(v.range(4900, 200, 3)).toEqual({ start: 95, end: 100 });
    expect(new VirtualIndex().range(0, 500)).toEqual({ start: 0, end: 0 });
  });

  it("grows past its first capacity and clears", () => {
    const v = new VirtualIndex();
    for (let i = 0; i < 1000; i++) {
      v.push(1);
      if (i === 300) expect(v.total()).toBe(301);
    }
    expect(v.total()).toBe(1000);
    expect(v.offsetOf(999)).toBe(999);
    v.clear();
    expect(v.length).toBe(0);
    expect(v.total()).toBe(0);
  });

  it("stays fast at 50 000 items", () => {
    const v = new VirtualIndex();
    for (let i = 0; i < 50_000; i++) v.push(60 + (i % 7));
    const started = performance.now();
    for (let k = 0; k < 1000; k++) {
      // Measuring near the end and asking for the window, as following the live end does.
      v.set(49_990 + (k % 10), 70 + (k % 3));
      v.range(v.total() - 800, 800, 6);
    }
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe("atBottom", () => {
  it("allows a little slack", () => {
    expect(atBottom(800, 200, 1000)).toBe(true);
    expect(atBottom(780, 200, 1000)).toBe(true);
    expect(atBottom(700, 200, 1000)).toBe(false);
    expect(atBottom(0, 500, 300)).toBe(true);
  });
});

describe("endUncovered", () => {
  it("says when the end's first visible item is above the first drawn", () => {
    // Ten items of 100: a viewport of 250 at the end shows items 7 to 9.
    const v = filled(Array(10).fill(100));
    expect(endUncovered(v, 250, 7)).toBe(false);
    expect(endUncovered(v, 250, 5)).toBe(false);
    expect(endUncovered(v, 250, 8)).toBe(true);
    // The last three measured at 50: the viewport now reaches back to item 6.
    for (const i of [7, 8, 9]) v.set(i, 50);
    expect(endUncovered(v, 250, 7)).toBe(true);
    expect(endUncovered(v, 250, 6)).toBe(false);
  });

  it("is false with nothing drawn or a list shorter than the viewport", () => {
    expect(endUncovered(filled([100, 100]), 250, undefined)).toBe(false);
    expect(endUncovered(filled([100, 100]), 250, 0)).toBe(false);
  });
});

describe("Rows", () => {
  const a = { id: "a" };
  const b = { id: "b" };

  it("gives an unchanged row back as the same object, and a changed one anew", () => {
    const rows = new Rows<{ id: string }>();
    const items: ({ id: string } | undefined)[] = [a, undefined, b];
    const heights = [40, 84, 50];
    const first = rows.rows(0, 3, (i) => items[i], (i) => heights[i]!);
    expect(first.map((r) => [r.item, r.pos, r.height])).toEqual([
      [a, 0, 40],
      [undefined, 1, 84],
      [b, 2, 50],
    ]);
    // Row 0 measured anew (its own height: the same row), the placeholder at 1 grown,
    // the item at 2 replaced (a new filter put another there).
    heights[0] = 44;
    heights[1] = 90;
    items[2] = { id: "c" };
    const second = rows.rows(0, 3, (i) => items[i], (i) => heights[i]!);
    expect(second[0]).toBe(first[0]);
    expect(second[1]).not.toBe(first[1]);
    expect(second[1]!.height).toBe(90);
    expect(second[2]).not.toBe(first[2]);
    expect(second[2]!.item).toEqual({ id: "c" });
  });

  it("forgets rows that scrolled out, and a page that arrived replaces its placeholder", () => {
    const rows = new Rows<{ id: string }>();
    const items: ({ id: string } | undefined)[] = [a, undefined, b];
    const first = rows.rows(0, 2, (i) => items[i], () => 84);
    const moved = rows.rows(1, 3, (i) => items[i], () => 84);
    expect(moved[0]).toBe(first[1]);
    items[1] = { id: "loaded" };
    const back = rows.rows(0, 2, (i) => items[i], () => 84);
    expect(back[0]).not.toBe(first[0]);
    expect(back[0]!.item).toBe(a);
    expect(back[1]!.item).toEqual({ id: "loaded" });
  });
});

describe("fixedRowsInView", () => {
  it("shows the rows on screen and a few more each side", () => {
    // The list starts 300 px down a 600 px viewport: rows 0..7 (48 px) show, 8 more below.
    expect(fixedRowsInView(300, 600, 48, 1000, 8)).toEqual([0, 15]);
    // Scrolled 48,000 px into it: row 1000 would be at the top.
    expect(fixedRowsInView(-24000, 600, 48, 1000, 8)).toEqual([492, 521]);
  });
  it("stops at the list's ends", () => {
    expect(fixedRowsInView(-47900, 600, 48, 1000, 8)).toEqual([989, 1000]);
    expect(fixedRowsInView(900, 600, 48, 1000, 8)).toEqual([0, 8]);
    expect(fixedRowsInView(0, 600, 48, 0)).toEqual([0, 0]);
  });
});
