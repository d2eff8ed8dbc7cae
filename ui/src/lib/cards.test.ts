import { describe, expect, it } from "vitest";
import { cardFromDocument, cardFromEssay, citable, progressText, summaryText } from "./cards";

const doc = { path: "/d/a.docx", name: "a.docx", size: 14470, kind: "docx" as const, problem: null };

describe("cards", () => {
  it("start ready or invalid from what Rust found", () => {
    expect(cardFromDocument(doc).state).toBe("ready");
    const bad = cardFromDocument({ ...doc, kind: null, problem: { code: "legacy_format", message: "old" } });
    expect(bad.state).toBe("invalid");
    expect(citable([bad, cardFromDocument(doc)]).map((c) => c.key)).toEqual(["/d/a.docx"]);
  });

  it("describe pasted text by its words", () => {
    expect(cardFromEssay("  one two  three ").detail).toBe("Text · 3 words");
  });

  it("say what is happening, including the 429 countdown", () => {
    expect(progressText({ type: "rateLimited", seconds: 4, attempt: 1, of: 3 })).toMatch(/retrying in 4 s/);
    expect(progressText({ type: "sending", bytes: 2_000_000 })).toBe("Sending 2.0 MB…");
  });

  it("summarise a result", () => {
    const text = summaryText({
      jobId: "j",
      kind: "docx",
      size: 1,
      summary: { paragraphsChanged: 1, citationsInserted: 3, referencesAdded: 2, changes: [] },
      summaryNote: null,
    });
    expect(text).toBe("1 paragraph changed · 3 citations inserted · 2 references added");
  });
});
