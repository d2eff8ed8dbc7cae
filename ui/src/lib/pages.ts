// The mission window's slice of a timeline: pages of events fetched from Rust by
// position, as the viewport needs them, and live events appended at the end. Only a
// bounded number of pages is kept, so the window's memory does not grow with the
// mission; the rest stays in SQLite.

export class PageCache<T> {
  private pages = new Map<number, T[]>();
  private loading = new Set<number>();

  constructor(
    readonly pageSize: number,
    private readonly maxPages: number,
  ) {}

  get(pos: number): T | undefined {
    return this.pages.get(Math.floor(pos / this.pageSize))?.[pos % this.pageSize];
  }

  /** Pages overlapping [start, end) that are not (fully) loaded nor being loaded, of `total` items. */
  missing(start: number, end: number, total: number): number[] {
    const out: number[] = [];
    if (end <= start) return out;
    for (let p = Math.floor(start / this.pageSize); p * this.pageSize < Math.min(end, total); p++) {
      if (this.loading.has(p)) continue;
      const want = Math.min(this.pageSize, total - p * this.pageSize);
      if ((this.pages.get(p)?.length ?? 0) < want) out.push(p);
    }
    return out;
  }

  markLoading(page: number): void {
    this.loading.add(page);
  }

  /** A fetched page; items beyond what it held may have arrived live meanwhile and are kept. */
  fill(page: number, items: T[]): void {
    this.loading.delete(page);
    const had = this.pages.get(page) ?? [];
    this.pages.set(page, items.length >= had.length ? items : items.concat(had.slice(items.length)));
  }

  /** Items from position `offset` (a page's start), over as many pages as they fill. */
  fillFrom(offset: number, items: T[]): void {
    for (let i = 0; i < items.length; i += this.pageSize) {
      this.fill(Math.floor((offset + i) / this.pageSize), items.slice(i, i + this.pageSize));
    }
  }

  /** A fetch that failed or was made for another filter: its page may be asked for again. */
  abandon(page: number): void {
    this.loading.delete(page);
  }

  /** A live item at `pos`, kept only where it extends a loaded page or starts a new one
   *  (a gap would be fetched later: `missing` sees the page is short). */
  put(pos: number, item: T): void {
    const p = Math.floor(pos / this.pageSize);
    const at = pos % this.pageSize;
    const page = this.pages.get(p);
    if (page && page.length === at) page.push(item);
    else if (!page && at === 0) this.pages.set(p, [item]);
  }

  /** Drops the pages farthest from `pos` beyond the limit; never the first, which a
   *  jump to the top shows at once. */
  trim(pos: number): void {
    if (this.pages.size <= this.maxPages) return;
    const center = Math.floor(pos / this.pageSize);
    const far = [...this.pages.keys()]
      .filter((p) => p !== 0)
      .sort((a, b) => Math.abs(b - center) - Math.abs(a - center));
    for (const p of far.slice(0, this.pages.size - this.maxPages)) this.pages.delete(p);
  }

  /** How many items are held. */
  held(): number {
    let n = 0;
    for (const page of this.pages.values()) n += page.length;
    return n;
  }

  clear(): void {
    this.pages.clear();
    this.loading.clear();
  }
}

/** Drops a map's oldest entries (its first inserted) beyond `keep`. */
export function forgetOldest<K, V>(map: Map<K, V>, keep: number): void {
  for (const key of map.keys()) {
    if (map.size <= keep) break;
    map.delete(key);
  }
}
