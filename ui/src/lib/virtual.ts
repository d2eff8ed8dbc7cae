// The arithmetic of a virtualized list: item heights (estimated until measured),
// their running offsets, and which items a viewport shows. Offsets are computed
// lazily from the first changed item, so appending or measuring near the end of
// 50 000 items costs next to nothing.

import { forgetOldest } from "./pages";

export class VirtualIndex {
  private heights = new Float64Array(256);
  /** offsets[i] is the top of item i; offsets[count] is the total height. */
  private offsets = new Float64Array(257);
  private count = 0;
  /** offsets[0..=clean] are up to date. */
  private clean = 0;

  get length(): number {
    return this.count;
  }

  clear(): void {
    this.count = 0;
    this.clean = 0;
  }

  push(height: number): void {
    if (this.count === this.heights.length) {
      const heights = new Float64Array(this.heights.length * 2);
      heights.set(this.heights);
      this.heights = heights;
      const offsets = new Float64Array(heights.length + 1);
      offsets.set(this.offsets.subarray(0, this.clean + 1));
      this.offsets = offsets;
    }
    this.heights[this.count] = height;
    this.count += 1;
  }

  /** `n` more items of one estimated height (a page of the timeline not fetched yet). */
  pushMany(n: number, height: number): void {
    for (let k = 0; k < n; k++) this.push(height);
  }

  heightOf(i: number): number {
    return this.heights[i] ?? 0;
  }

  /** Sets item i's height; true when it changed. */
  set(i: number, height: number): boolean {
    if (i < 0 || i >= this.count || this.heights[i] === height) return false;
    this.heights[i] = height;
    if (this.clean > i) this.clean = i;
    return true;
  }

  private ensure(upTo: number): void {
    const k = Math.min(upTo, this.count);
    for (let j = this.clean; j < k; j++) this.offsets[j + 1] = this.offsets[j]! + this.heights[j]!;
    if (k > this.clean) this.clean = k;
  }

  offsetOf(i: number): number {
    this.ensure(i);
    return this.offsets[Math.min(i, this.count)]!;
  }

  total(): number {
    this.ensure(this.count);
    return this.offsets[this.count]!;
  }

  /** The item at height y (clamped to the list). */
  indexAt(y: number): number {
    if (this.count === 0) return 0;
    this.ensure(this.count);
    // The first item whose bottom is below y.
    let lo = 0;
    let hi = this.count - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.offsets[mid + 1]! > y) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Items [start, end) that a viewport at `top` of `height` shows, with `overscan` more each side. */
  range(top: number, height: number, overscan = 4): { start: number; end: number } {
    if (this.count === 0) return { start: 0, end: 0 };
    const first = this.indexAt(Math.max(0, top));
    const last = this.indexAt(Math.max(0, top + height));
    return {
      start: Math.max(0, first - overscan),
      end: Math.min(this.count, last + 1 + overscan),
    };
  }
}

/** Whether a viewport showing the end of the list starts above `firstDrawn`, the first
 *  item drawn: items measured shorter than their estimates pull the end's first
 *  visible item back, and the items drawn no longer cover the viewport's top. */
export function endUncovered(index: VirtualIndex, viewport: number, firstDrawn: number | undefined): boolean {
  if (firstDrawn === undefined) return false;
  return index.range(Math.max(0, index.total() - viewport), viewport, 0).start < firstDrawn;
}

/** Whether a scroller is (close enough to) its bottom to keep following new items. */
export function atBottom(scrollTop: number, clientHeight: number, scrollHeight: number, slack = 32): boolean {
  return scrollTop + clientHeight >= scrollHeight - slack;
}

/** A row of a virtualized list: its item (`undefined` while its page is fetched), its
 *  position, and its height (what a placeholder is drawn at). */
export interface Row<T> {
  item: T | undefined;
  pos: number;
  height: number;
}

/** The rows [start, end) to draw. A row drawn last time that has not changed is the
 *  same object again: a list compares rows by identity, and a new object for an
 *  unchanged row redraws all of it. A row's item's own measured height does not
 *  count as a change: only a placeholder is drawn at its height. */
export class Rows<T> {
  private drawn = new Map<number, Row<T>>();

  rows(start: number, end: number, itemAt: (pos: number) => T | undefined, heightOf: (pos: number) => number): Row<T>[] {
    const out: Row<T>[] = [];
    const kept = new Map<number, Row<T>>();
    for (let pos = start; pos < end; pos++) {
      const [item, height, was] = [itemAt(pos), heightOf(pos), this.drawn.get(pos)];
      const same = was !== undefined && was.item === item && (item !== undefined || was.height === height);
      const row = same ? was : { item, pos, height };
      out.push(row);
      kept.set(pos, row);
    }
    this.drawn = kept;
    return out;
  }
}

/**
 * Takes the heights a ResizeObserver measured for drawn rows (each row's element
 * carries `data-seq` and `data-pos`): kept by record in `measured` (the newest `kept`),
 * and set in `index` where the row still shows that record. True when a height changed.
 */
export function takeHeights(
  entries: ResizeObserverEntry[],
  measured: Map<number, number>,
  kept: number,
  seqAt: (pos: number) => number | undefined,
  index: VirtualIndex,
): boolean {
  let changed = false;
  for (const entry of entries) {
    const el = entry.target as HTMLElement;
    const seq = Number(el.dataset.seq);
    const pos = Number(el.dataset.pos);
    const h = el.offsetHeight;
    if (h === 0) continue;
    measured.delete(seq);
    measured.set(seq, h);
    forgetOldest(measured, kept);
    if (seqAt(pos) === seq && index.set(pos, h)) changed = true;
  }
  return changed;
}

/**
 * The rows of one fixed height `row` a list of `count` shows when its top is `top` px
 * from the viewport's top (negative once scrolled past) and the viewport is `viewport`
 * px tall, with `overscan` more each side: `[from, to)`.
 */
export function fixedRowsInView(top: number, viewport: number, row: number, count: number, overscan = 8): [number, number] {
  if (count === 0 || row <= 0) return [0, 0];
  const from = Math.max(0, Math.floor(-top / row) - overscan);
  const to = Math.min(count, Math.max(0, Math.ceil((viewport - top) / row)) + overscan);
  return [Math.min(from, to), to];
}
