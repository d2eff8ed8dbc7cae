// The slice of a mission's conversation a window holds: contiguous items from `offset`,
// patched by index as records arrive, paged back by item, and trimmed so a mission of any
// length costs the window about the same memory. Pure, tested in conversation.test.ts.
import type { ConversationChanges, ConversationFacts, ConversationPage, Item, Source } from "./bindings";

/** A streaming reply's paragraphs (see `paragraphs`): those finished, and the last, which
 *  the next delta grows. A delta changes only `last` (and, once a paragraph ends, `done`
 *  is a new array one longer), so drawing it touches one text node, however long the
 *  reply. */
export type Paragraphs = { done: string[]; last: string };

/** An item as a window holds it: a reply that streams keeps its paragraphs, grown at
 *  the end as text arrives, so a delta never splits the whole text. */
export type HeldItem = Item & { paragraphs?: Paragraphs };

/** `text`'s paragraphs, as a streaming reply keeps them. */
export function splitParagraphs(text: string): Paragraphs {
  const parts = paragraphs(text);
  return { last: parts.pop() ?? "", done: parts };
}

/** `p` grown by `text` at its end. */
export function growParagraphs(p: Paragraphs, text: string): Paragraphs {
  const parts = paragraphs(p.last + text);
  const last = parts.pop() ?? "";
  return { last, done: parts.length === 0 ? p.done : p.done.concat(parts) };
}

/** Where a long reply is drawn from while the window follows its end: its units (the
 *  paragraphs of a reply that streams, the top-level blocks of one formatted) from
 *  `from`, of the `of` it had when cut, and which units those were. A reply of 400,000
 *  characters drawn whole cost the web process 20 MB it kept; its end is all a reader
 *  following it sees. */
export type Cut = { from: number; of: number; paragraphs: boolean };

/** Units drawn past those that cover the screens, so a reply that grows is cut again
 *  only every CUT_SLACK paragraphs, a few blocks at a time. */
export const CUT_SLACK = 8;

/** Whether `item` is drawn a block per paragraph of its text (a reply that streams). */
export function inParagraphs(item: Item): boolean {
  return item.kind === "assistant" && (item.open || !item.html);
}

/** Units of a long reply drawn before it is measured, while following. */
export const OPENING_UNITS = 3 * CUT_SLACK;

/** The cut a long reply is drawn with while following until it is measured: its last
 *  OPENING_UNITS, when it has enough more that a cut is worth it. */
export function openingCut(item: HeldItem): Cut | undefined {
  const total = unitTotal(item);
  if (total <= OPENING_UNITS + 2 * CUT_SLACK) return undefined;
  return { from: total - OPENING_UNITS, of: total, paragraphs: inParagraphs(item) };
}

/** How many units `item` is drawn in (1 when it cannot be cut). */
export function unitTotal(item: HeldItem): number {
  if (item.kind !== "assistant") return 1;
  if (inParagraphs(item)) return (item.paragraphs?.done.length ?? paragraphs(item.text).length - 1) + 1;
  return Math.max(1, item.htmlBlocks?.length ?? 0);
}

/** The first of `total` units drawn under `cut`. A reply cut as it streamed and since
 *  formatted keeps as many units from its end until it is measured again. */
export function firstDrawn(cut: Cut | undefined, paragraphs: boolean, total: number): number {
  if (!cut) return 0;
  const from = cut.paragraphs === paragraphs ? cut.from : total - (cut.of - cut.from);
  return Math.min(Math.max(0, from), Math.max(0, total - 1));
}

/** How many units from a reply's end cover `px`, from the height `height` of the `drawn`
 *  units now on screen; every unit when nothing drawn tells. */
export function unitsToCover(px: number, height: number, drawn: number): number {
  if (px <= 0) return 1;
  if (drawn <= 0 || height <= 0) return Number.POSITIVE_INFINITY;
  return Math.ceil(px / (height / drawn));
}

/** The cut a reply of `total` units gets when `need` of them cover the screens: the one
 *  it has while that draws between `need` and `need + 2 * CUT_SLACK`, else `need +
 *  CUT_SLACK` from its end; none when that is all of it. */
export function nextCut(cut: Cut | undefined, paragraphs: boolean, total: number, need: number): Cut | undefined {
  const drawn = total - firstDrawn(cut, paragraphs, total);
  if (cut && cut.paragraphs === paragraphs && drawn >= need && drawn <= need + 2 * CUT_SLACK) return cut;
  if (!cut && total <= need + 2 * CUT_SLACK) return undefined;
  const from = total - need - CUT_SLACK;
  return from > 0 ? { from, of: total, paragraphs } : undefined;
}

/** The most items held at once; a page back past it drops the newest, and while the reader
 *  reads back (not following) live items past it are not taken: "Jump to newest" shows. */
export const MAX_HELD = 300;
/** Items per page read from Rust as the reader scrolls back. */
export const PAGE = 100;
/** The newest items a window opens on (core's WINDOW_TAIL): more than a screen shows. */
export const TAIL = 40;
/** Sources listed before "More sources" (core's SOURCE_PAGE). */
export const SOURCE_PAGE = 40;
/** While following, the window keeps only the newest items that cover this many heights of
 *  its scroller (at least FOLLOW_MIN), and pages older ones back in when the reader scrolls
 *  up. Each item drawn costs the web process memory that it does not fully give back: at
 *  50,000 records, following with 100 items held left it at 1.2x a short mission's. */
export const FOLLOW_SCREENS = 2;
export const FOLLOW_MIN = 8;

export class ItemWindow {
  offset = 0;
  items: HeldItem[] = [];
  /** Items held whose growth did not fit what is held (read them whole: `takeStale`). */
  private stale = new Set<number>();
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
   *  the end (and, when the reader reads back, holds fewer than MAX_HELD); the figures
   *  always move on. `keep`: the newest items to keep while following, null while the
   *  reader reads back. Returns whether anything held changed. */
  patch(changes: ConversationChanges, keep: number | null): boolean {
    const wasAtEnd = this.atEnd;
    let touched = false;
    for (const item of changes.items) {
      const at = item.index - this.offset;
      if (at >= 0 && at < this.items.length) {
        this.items[at] = item;
        touched = true;
      } else if (at === this.items.length && wasAtEnd && (keep !== null || this.items.length < MAX_HELD)) {
        this.items.push(item);
        touched = true;
      }
    }
    // A reply that grew arrives as what it grew by, from the length it had when last sent.
    for (const grew of changes.appended) {
      const at = this.fitting(grew.index, grew.from);
      if (at === null) continue;
      const held = this.items[at]!;
      const grown = growParagraphs(held.paragraphs ?? splitParagraphs(held.text), grew.text);
      this.items[at] = { ...held, text: held.text + grew.text, lastSeq: grew.lastSeq, paragraphs: grown };
      touched = true;
    }
    // One that closed as it grew arrives without the text held, with what closing made.
    for (const c of changes.closed) {
      const at = this.fitting(c.index, c.from);
      if (at === null) continue;
      const held = this.items[at]!;
      const { paragraphs: _, ...rest } = held;
      this.items[at] = {
        ...rest,
        text: held.text + c.text,
        open: false,
        narration: c.narration,
        html: c.html,
        htmlBlocks: c.htmlBlocks,
        lastSeq: c.lastSeq,
      };
      touched = true;
    }
    // Sources arrive in order: appended only when every earlier one is held, and only
    // up to SOURCE_PAGE, as a mission opened afresh holds them (more are paged in when asked):
    // a long mission's thousands of sources each in the list cost the window as much
    // memory again as the rest of it.
    if (this.sources.length === this.facts.sources) {
      for (const s of changes.sources) {
        if (this.sources.length >= SOURCE_PAGE) break;
        this.sources.push(s);
      }
    }
    this.facts = changes.facts;
    if (keep !== null) this.trimFront(keep);
    return touched;
  }

  /** Where item `index` is held, when its text is `from` long (what arrived grows it
   *  from there); null when it is not held, or held at another length (marked stale). */
  private fitting(index: number, from: number): number | null {
    const at = index - this.offset;
    const held = at >= 0 ? this.items[at] : undefined;
    if (!held) return null;
    if (held.text.length !== from) {
      this.stale.add(index);
      return null;
    }
    return at;
  }

  /** Items held whose growth arrived from another length than theirs (a window that
   *  missed an update): each is to be read whole and put back with `replace`. */
  takeStale(): number[] {
    const out = [...this.stale];
    this.stale.clear();
    return out;
  }

  /** An item read whole, in place of the one held; whether it was held. */
  replace(item: Item): boolean {
    const at = item.index - this.offset;
    if (at < 0 || at >= this.items.length) return false;
    this.items[at] = item;
    return true;
  }

  /** Drops the oldest items past `keep` (while following the end); whether any went. */
  trimFront(keep: number): boolean {
    const extra = this.items.length - Math.max(1, keep);
    if (extra <= 0) return false;
    this.items.splice(0, extra);
    this.offset += extra;
    return true;
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

/** A message cut after each blank line ("\n\n"), each part keeping its own: joined, they
 *  are the text again. A message that streams is drawn a block per part, so a delta
 *  lays out only the last paragraph, not the whole message again (a 20,000-character
 *  reply as one text node cost the web process a third of a core at 200 deltas a second). */
export function paragraphs(text: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (;;) {
    const at = text.indexOf("\n\n", from);
    if (at < 0) break;
    out.push(text.slice(from, at + 2));
    from = at + 2;
  }
  if (from < text.length || out.length === 0) out.push(text.slice(from));
  return out;
}

/** A byte count as people read it, as core writes it (`readable_size`): "900 B", "12.3 KB". */
export function fileSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = bytes / 1000;
  let unit = 0;
  while (v >= 1000 && unit < units.length - 1) {
    v /= 1000;
    unit += 1;
  }
  return `${v.toFixed(1)} ${units[unit]}`;
}

/** Whether a file's link may open: http(s) only (core keeps no other; this is the window's own check). */
export function isWebLink(url: string | undefined): url is string {
  return !!url && /^https?:\/\//i.test(url.trim());
}
