// The slice of a mission's conversation a window holds: contiguous items from `offset`,
// patched by index as records arrive, paged back by item, and trimmed so a mission of any
// length costs the window about the same memory. Pure, tested in conversation.test.ts.
import type { ConversationChanges, ConversationFacts, ConversationPage, Item, Source } from "./bindings";

/** The most items held at once; a page back past it drops the newest. */
export const MAX_HELD = 300;
/** Items per page read from Rust. */
export const PAGE = 100;

export class ItemWindow {
  offset = 0;
  items: Item[] = [];
  facts: ConversationFacts = { records: 0, items: 0, sources: 0 };
  /** Sources, in the order found: the first `sources.length` of `facts.sources`. */
  sources: Source[] = [];

  /** The window holds the conversation's newest item (so live items extend it). */
  get atEnd(): boolean {
    return this.offset + this.items.length >= this.facts.items;
  }

  reset(page: ConversationPage) {
    this.offset = page.offset;
    this.items = page.items.slice();
    this.facts = page.facts;
    this.sources = page.sources.slice();
  }

  /** Applies what new records changed. Items past the slice are taken only while it holds
   *  the end; the figures always move on. Returns whether anything held changed. */
  patch(changes: ConversationChanges, follow: boolean): boolean {
    const wasAtEnd = this.atEnd;
    let touched = false;
    for (const item of changes.items) {
      const at = item.index - this.offset;
      if (at >= 0 && at < this.items.length) {
        this.items[at] = item;
        touched = true;
      } else if (at === this.items.length && wasAtEnd) {
        this.items.push(item);
        touched = true;
      }
    }
    // Sources arrive in order: appended only when every earlier one is held.
    if (this.sources.length === this.facts.sources) {
      for (const s of changes.sources) this.sources.push(s);
    }
    this.facts = changes.facts;
    if (follow) this.trimFront();
    return touched;
  }

  /** Drops the oldest items past MAX_HELD (while following the end). */
  trimFront() {
    const extra = this.items.length - MAX_HELD;
    if (extra > 0) {
      this.items.splice(0, extra);
      this.offset += extra;
    }
  }

  /** The page before the slice, put in front; the newest past MAX_HELD are dropped. */
  prepend(page: ConversationPage) {
    const fresh = page.items.filter((i) => i.index < this.offset);
    if (fresh.length === 0) return;
    this.items = fresh.concat(this.items);
    this.offset = fresh[0]!.index;
    this.facts = page.facts;
    if (this.items.length > MAX_HELD) this.items.length = MAX_HELD;
  }

  /** Where the page before the slice starts, or null at the first item. */
  previousOffset(): number | null {
    if (this.offset === 0) return null;
    return Math.max(0, this.offset - PAGE);
  }

  moreSources(more: Source[]) {
    const have = this.sources.length;
    for (const s of more.slice(0)) {
      if (this.sources.length >= this.facts.sources) break;
      this.sources.push(s);
    }
    return this.sources.length > have;
  }
}

/** A source's name as the list shows it: its title, or the URL's host and path. */
export function sourceName(s: Source): string {
  if (s.title && s.title.trim() !== "") return s.title;
  try {
    const u = new URL(s.url);
    return u.host + (u.pathname === "/" ? "" : u.pathname);
  } catch {
    return s.url;
  }
}

/** `0.875` → `$0.88`. */
export function usd(v: number): string {
  return `$${(Math.round(v * 100) / 100).toFixed(2)}`;
}
