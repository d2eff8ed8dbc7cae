import { describe, expect, it } from "vitest";
import type { ConversationChanges, Item } from "./bindings";
import {
  CUT_SLACK,
  ItemWindow,
  MAX_HELD,
  SOURCE_PAGE,
  fileSize,
  firstDrawn,
  isWebLink,
  nextCut,
  OPENING_UNITS,
  openingCut,
  paragraphs,
  sourceName,
  unitTotal,
  unitsToCover,
  type Cut,
} from "./conversation";

const item = (index: number, text = `item ${index}`): Item => ({
  index,
  kind: "assistant",
  text,
  open: false,
  narration: false,
  firstSeq: index,
  lastSeq: index,
});

const changes = (items: Item[], total: number, sources = 0): ConversationChanges => ({
  items,
  appended: [],
  closed: [],
  sources: [],
  facts: { records: 0, items: total, sources },
});

describe("ItemWindow", () => {
  it("patches items by index and grows at the end while it holds the end", () => {
    const w = new ItemWindow();
    w.reset({ offset: 0, items: [item(0), item(1)], facts: { records: 0, items: 2, sources: 0 }, sources: [] });
    expect(w.patch(changes([item(1, "grown"), item(2)], 3), 10)).toBe(true);
    expect(w.items.map((i) => i.text)).toEqual(["item 0", "grown", "item 2"]);
    expect(w.atEnd).toBe(true);
  });

  it("does not take new items into a slice scrolled back from the end", () => {
    const w = new ItemWindow();
    w.reset({ offset: 0, items: [item(0)], facts: { records: 0, items: 5, sources: 0 }, sources: [] });
    expect(w.patch(changes([item(5)], 6), null)).toBe(false);
    expect(w.items.length).toBe(1);
    expect(w.facts.items).toBe(6);
  });

  it("keeps the newest `keep` items while following, trimming the oldest", () => {
    const w = new ItemWindow();
    w.reset({ offset: 0, items: [], facts: { records: 0, items: 0, sources: 0 }, sources: [] });
    for (let i = 0; i < MAX_HELD + 50; i++) w.patch(changes([item(i)], i + 1), 12);
    expect(w.items.length).toBe(12);
    expect(w.offset).toBe(MAX_HELD + 50 - 12);
    expect(w.items[0]!.index).toBe(MAX_HELD + 50 - 12);
    expect(w.items.at(-1)!.index).toBe(MAX_HELD + 49);
    expect(w.atEnd).toBe(true);
  });

  it("trims to what covers the screen once drawn, keeping at least one item", () => {
    const w = new ItemWindow();
    w.reset({ offset: 60, items: Array.from({ length: 40 }, (_, i) => item(60 + i)), facts: { records: 0, items: 100, sources: 0 }, sources: [] });
    expect(w.trimFront(50)).toBe(false);
    expect(w.trimFront(15)).toBe(true);
    expect([w.offset, w.items.length, w.items[0]!.index]).toEqual([85, 15, 85]);
    expect(w.trimFront(0)).toBe(true);
    expect(w.items.map((i) => i.index)).toEqual([99]);
    expect(w.atEnd).toBe(true);
  });

  it("keeps what was paged back while the reader is not following", () => {
    const w = new ItemWindow();
    const held = Array.from({ length: MAX_HELD - 1 }, (_, i) => item(i));
    w.reset({ offset: 0, items: held, facts: { records: 0, items: MAX_HELD - 1, sources: 0 }, sources: [] });
    w.patch(changes([item(MAX_HELD - 1)], MAX_HELD), null);
    expect(w.items.length).toBe(MAX_HELD);
    expect(w.offset).toBe(0);
    expect(w.atEnd).toBe(true);
    // Past MAX_HELD it stops taking the end, rather than growing without bound.
    expect(w.patch(changes([item(MAX_HELD), item(MAX_HELD + 1)], MAX_HELD + 2), null)).toBe(false);
    expect(w.items.length).toBe(MAX_HELD);
    expect(w.atEnd).toBe(false);
  });

  it("pages back by item and drops the newest past the limit", () => {
    const w = new ItemWindow();
    const tail = Array.from({ length: MAX_HELD }, (_, i) => item(1000 + i));
    w.reset({ offset: 1000, items: tail, facts: { records: 0, items: 1000 + MAX_HELD, sources: 0 }, sources: [] });
    expect(w.previousOffset()).toBe(900);
    w.prepend({ offset: 900, items: Array.from({ length: 100 }, (_, i) => item(900 + i)), facts: w.facts, sources: [] });
    expect(w.offset).toBe(900);
    expect(w.items.length).toBe(MAX_HELD);
    expect(w.items.at(-1)!.index).toBe(900 + MAX_HELD - 1);
    expect(w.atEnd).toBe(false);
  });

  it("holds at most SOURCE_PAGE sources while following, as when opened afresh", () => {
    const w = new ItemWindow();
    w.reset({ offset: 0, items: [], facts: { records: 0, items: 0, sources: 0 }, sources: [] });
    const src = (n: number) => ({ url: `https://s/${n}`, item: 0 });
    w.patch({ items: [], appended: [], closed: [], sources: Array.from({ length: SOURCE_PAGE - 1 }, (_, i) => src(i)), facts: { records: 0, items: 0, sources: SOURCE_PAGE - 1 } }, 10);
    w.patch({ items: [], appended: [], closed: [], sources: [src(SOURCE_PAGE - 1), src(SOURCE_PAGE)], facts: { records: 0, items: 0, sources: SOURCE_PAGE + 1 } }, 10);
    expect(w.sources.length).toBe(SOURCE_PAGE);
    expect(w.sources.at(-1)!.url).toBe(`https://s/${SOURCE_PAGE - 1}`);
    w.patch({ items: [], appended: [], closed: [], sources: [src(SOURCE_PAGE + 1)], facts: { records: 0, items: 0, sources: SOURCE_PAGE + 2 } }, 10);
    expect(w.sources.length).toBe(SOURCE_PAGE);
    // Paged in when asked, in order.
    expect(w.moreSources([src(SOURCE_PAGE), src(SOURCE_PAGE + 1)])).toBe(true);
    expect(w.sources.length).toBe(SOURCE_PAGE + 2);
  });

  it("appends sources only when it holds every earlier one", () => {
    const w = new ItemWindow();
    w.reset({ offset: 0, items: [], facts: { records: 0, items: 0, sources: 1 }, sources: [{ url: "https://a", item: 0 }] });
    w.patch({ items: [], appended: [], closed: [], sources: [{ url: "https://b", item: 0 }], facts: { records: 0, items: 0, sources: 2 } }, 10);
    expect(w.sources.map((s) => s.url)).toEqual(["https://a", "https://b"]);
    const v = new ItemWindow();
    v.reset({ offset: 0, items: [], facts: { records: 0, items: 0, sources: 150 }, sources: [{ url: "https://a", item: 0 }] });
    v.patch({ items: [], appended: [], closed: [], sources: [{ url: "https://z", item: 0 }], facts: { records: 0, items: 0, sources: 151 } }, 10);
    expect(v.sources.length).toBe(1);
  });

  it("names a source by its title, else its host and path", () => {
    expect(sourceName({ url: "https://who.int/heat", title: "WHO", item: 0 })).toBe("WHO");
    expect(sourceName({ url: "https://who.int/heat", item: 0 })).toBe("who.int/heat");
  });
});

describe("paragraphs", () => {
  it("cuts after each blank line, each part keeping it, so the parts join to the text", () => {
    expect(paragraphs("")).toEqual([""]);
    expect(paragraphs("one line")).toEqual(["one line"]);
    expect(paragraphs("# Title\n\nA finding.\nMore.\n\n- a\n- b")).toEqual(["# Title\n\n", "A finding.\nMore.\n\n", "- a\n- b"]);
    expect(paragraphs("ends\n\n")).toEqual(["ends\n\n"]);
    for (const text of ["a\n\n\nb", "\n\n\n\n", "x\n\ny\n\n\n\nz ✅", "é\n"]) {
      expect(paragraphs(text).join("")).toBe(text);
      expect(paragraphs(text).every((p, i, all) => p !== "" || all.length === 1)).toBe(true);
    }
  });

  it("leaves every paragraph but the last as it was when text is appended", () => {
    const before = paragraphs("First.\n\nSecond, gr");
    const after = paragraphs("First.\n\nSecond, growing.\n\nThird");
    expect(after[0]).toBe(before[0]);
    expect(after.length).toBe(3);
  });
});

describe("files in messages", () => {
  it("sizes read as core writes them", () => {
    expect(fileSize(900)).toBe("900 B");
    expect(fileSize(3000)).toBe("3.0 KB");
    expect(fileSize(48_213)).toBe("48.2 KB");
    expect(fileSize(12_500_000)).toBe("12.5 MB");
  });
  it("only an http(s) address is a link", () => {
    expect(isWebLink("https://files.example.org/a.pdf")).toBe(true);
    expect(isWebLink("HTTP://x.org/")).toBe(true);
    for (const bad of ["data:image/png;base64,AAAA", "javascript:alert(1)", "file:///etc/passwd", "blob:https://x/1", undefined]) {
      expect(isWebLink(bad)).toBe(false);
    }
  });
});

describe("a reply that grows", () => {
  const open = (text: string): Item => ({ ...item(2, text), open: true });
  const grew = (from: number, text: string, lastSeq = 9) => ({
    items: [],
    appended: [{ index: 2, from, text, lastSeq }],
    closed: [],
    sources: [],
    facts: { records: 0, items: 3, sources: 0 },
  });

  it("takes what it grew by, keeping its paragraphs, split only at the end", () => {
    const w = new ItemWindow();
    w.reset({ offset: 0, items: [item(0), item(1), open("Heat 🌡\n\nRi")], facts: { records: 0, items: 3, sources: 0 }, sources: [] });
    // "Heat 🌡\n\nRi" is 11 UTF-16 units: the thermometer is two.
    expect(w.patch(grew(11, "ses.\n\nMore"), null)).toBe(true);
    const held = w.items[2]!;
    expect(held.text).toBe("Heat 🌡\n\nRises.\n\nMore");
    expect(held.paragraphs).toEqual({ done: ["Heat 🌡\n\n", "Rises.\n\n"], last: "More" });
    expect(held.lastSeq).toBe(9);
    // A delta inside the last paragraph keeps the finished ones as they were.
    const done = held.paragraphs!.done;
    w.patch(grew(held.text.length, " and more"), null);
    expect(w.items[2]!.paragraphs!.done).toBe(done);
    expect(w.items[2]!.paragraphs!.last).toBe("More and more");
    const p = w.items[2]!.paragraphs!;
    expect([...p.done, p.last]).toEqual(paragraphs(w.items[2]!.text));
    expect(w.takeStale()).toEqual([]);
  });

  it("growth from another length than the one held is read whole instead", () => {
    const w = new ItemWindow();
    w.reset({ offset: 0, items: [item(0), item(1), open("Heat")], facts: { records: 0, items: 3, sources: 0 }, sources: [] });
    expect(w.patch(grew(9, " rises"), null)).toBe(false);
    expect(w.items[2]!.text).toBe("Heat");
    expect(w.takeStale()).toEqual([2]);
    expect(w.takeStale()).toEqual([]);
    expect(w.replace(open("Heat rises and more"))).toBe(true);
    expect(w.items[2]!.text).toBe("Heat rises and more");
    // Growth of an item not held is for whoever reads it whole later.
    const v = new ItemWindow();
    v.reset({ offset: 0, items: [item(0)], facts: { records: 0, items: 3, sources: 0 }, sources: [] });
    expect(v.patch(grew(4, "x"), null)).toBe(false);
    expect(v.takeStale()).toEqual([]);
  });

  it("closes without the text it held, taking what closing made", () => {
    const w = new ItemWindow();
    w.reset({ offset: 0, items: [item(0), item(1), open("Heat 🌡\n\nRi")], facts: { records: 0, items: 3, sources: 0 }, sources: [] });
    w.patch(grew(11, "ses"), null);
    const close = (from: number) => ({
      items: [],
      appended: [],
      closed: [{ index: 2, from, text: ".", narration: false, html: "<p>Heat 🌡</p>\n<p>Rises.</p>\n", htmlBlocks: [0, 15], lastSeq: 12 }],
      sources: [],
      facts: { records: 0, items: 3, sources: 0 },
    });
    // Held at another length: read whole, nothing taken.
    expect(w.patch(close(13), null)).toBe(false);
    expect(w.takeStale()).toEqual([2]);
    expect(w.patch(close(14), null)).toBe(true);
    const held = w.items[2]!;
    expect(held).toEqual({ ...item(2, "Heat 🌡\n\nRises."), html: "<p>Heat 🌡</p>\n<p>Rises.</p>\n", htmlBlocks: [0, 15], lastSeq: 12 });
    expect(held.paragraphs).toBeUndefined();
    expect(unitTotal(held)).toBe(2);
    // The second block starts at 15 UTF-16 units, where a window can cut it.
    expect(held.html!.slice(held.htmlBlocks![1])).toBe("<p>Rises.</p>\n");
  });
});

describe("a long reply drawn from its end while followed", () => {
  it("is cut to what covers the screens and a slack, and cut again only past twice the slack", () => {
    const need = unitsToCover(1000, 500, 10); // 50 px a paragraph
    expect(need).toBe(20);
    expect(nextCut(undefined, true, need + 2 * CUT_SLACK, need)).toBeUndefined();
    let cut = nextCut(undefined, true, 100, need)!;
    expect(cut).toEqual({ from: 100 - need - CUT_SLACK, of: 100, paragraphs: true });
    expect(firstDrawn(cut, true, 100)).toBe(72);
    // Paragraphs that arrive are drawn, and the cut stays where it is, until twice the slack.
    for (let total = 101; total <= 72 + need + 2 * CUT_SLACK; total++) expect(nextCut(cut, true, total, need)).toBe(cut);
    const total = 73 + need + 2 * CUT_SLACK;
    cut = nextCut(cut, true, total, need)!;
    expect(total - firstDrawn(cut, true, total)).toBe(need + CUT_SLACK);
    // The screens grew taller than what is drawn: drawn from further up.
    expect(total - firstDrawn(nextCut(cut, true, total, need * 2), true, total)).toBe(2 * need + CUT_SLACK);
    // Nothing measured (drawn nothing), or the reader needs every unit: drawn whole.
    expect(nextCut(cut, true, total, unitsToCover(1000, 0, 0))).toBeUndefined();
    // Below the screens already: its last unit and the slack.
    expect(unitsToCover(-5, 500, 10)).toBe(1);
  });

  it("keeps as many units from its end once formatted, until measured again", () => {
    const cut: Cut = { from: 70, of: 100, paragraphs: true };
    expect(firstDrawn(cut, false, 60)).toBe(30);
    expect(firstDrawn(cut, false, 20)).toBe(0);
    expect(firstDrawn({ from: 99, of: 100, paragraphs: true }, false, 1)).toBe(0);
    // Measured again in blocks, it gets a cut in blocks.
    expect(nextCut(cut, false, 60, 10)).toEqual({ from: 60 - 10 - CUT_SLACK, of: 60, paragraphs: false });
  });

  it("is drawn from near its end before it is measured, when it is long", () => {
    const blocks = (n: number) => ({ ...item(0), html: "<p>x</p>\n".repeat(n), htmlBlocks: Array.from({ length: n }, (_, i) => 9 * i) });
    expect(openingCut(blocks(OPENING_UNITS + 2 * CUT_SLACK))).toBeUndefined();
    expect(openingCut(blocks(100))).toEqual({ from: 100 - OPENING_UNITS, of: 100, paragraphs: false });
    const streaming = { ...item(0, "p\n\n".repeat(99) + "last"), open: true };
    expect(openingCut(streaming)).toEqual({ from: 100 - OPENING_UNITS, of: 100, paragraphs: true });
  });

  it("counts a reply's units as it is drawn", () => {
    expect(unitTotal({ ...item(0, "a\n\nb\n\nc"), open: true })).toBe(3);
    expect(unitTotal({ ...item(0, "a\n\nb"), open: true, paragraphs: { done: ["a\n\n", "b\n\n"], last: "c" } })).toBe(3);
    expect(unitTotal({ ...item(0), html: "<p>a</p>\n<p>b</p>\n", htmlBlocks: [0, 9] })).toBe(2);
    // Formatted before blocks were kept: one unit, drawn whole.
    expect(unitTotal({ ...item(0), html: "<p>a</p>\n<p>b</p>\n" })).toBe(1);
    expect(unitTotal({ ...item(0), kind: "tool" })).toBe(1);
  });
});
