import { describe, expect, it } from "vitest";
import { type Card, cardFromDocument, cardFromEssay, citable, progressText, queueProgress, summaryText } from "./cards";

const doc = { path: "/d/a.docx", name: "a.docx", size: 14470, kind: "docx" as const, problem: null, references: 4 };

describe("cards", () => {
  it("start ready or invalid from what Rust found", () => {
    expect(cardFromDocument(doc).state).toBe("ready");
    const bad = cardFromDocument({ ...doc, kind: null, problem: { code: "legacy_format", message: "old" } });
    expect(bad.state).toBe("invalid");
    expect(citable([bad, cardFromDocument(doc)]).map((c) => c.key)).toEqual(["/d/a.docx"]);
  });

  it("say where a long cite is", () => {
    expect(progressText({ type: "uploading", sent: 4_500_000, of: 9_000_000 })).toMatch(/^Sending… 50% of /);
    expect(progressText({ type: "waiting", seconds: 42 })).toBe("Waiting for the service… 42 s");
  });

  it("say before citing that a document has no References section", () => {
    expect(cardFromDocument(doc).note).toBeNull();
    const none = cardFromDocument({ ...doc, references: 0 });
    expect(none.note).toContain("No References section");
    expect(none.state).toBe("ready");
    expect(cardFromDocument({ ...doc, references: null }).note).toBeNull();
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
      summary: { paragraphsChanged: 1, citationsInserted: 3, citationsInNotes: 0, referencesAdded: 2, changes: [], newReferences: ["A", "B"] },
      summaryNote: null,
      reviewable: true,
    });
    expect(text).toBe("1 paragraph changed · 3 citations inserted · 2 references added");
  });

  it("say where citations went and that the references stayed as they were", () => {
    const text = summaryText({
      jobId: "j",
      kind: "pptx",
      size: 1,
      summary: { paragraphsChanged: 4, citationsInserted: 5, citationsInNotes: 2, referencesAdded: 0, changes: [], newReferences: [] },
      summaryNote: null,
      reviewable: false,
    });
    expect(text).toBe("4 paragraphs changed · 5 citations inserted (2 in speaker notes) · references unchanged");
  });

  it("count a queue by the documents sent, failures among the done", () => {
    const at = (path: string, state: Card["state"]): Card => ({ ...cardFromDocument({ ...doc, path }), state });
    const cards = [at("a", "cited"), at("b", "citing"), at("c", "error"), at("d", "ready"), at("e", "saved")];
    expect(queueProgress(cards)).toEqual({ started: 4, done: 3, failed: 1 });
    expect(queueProgress([at("a", "ready")])).toEqual({ started: 0, done: 0, failed: 0 });
  });
});
