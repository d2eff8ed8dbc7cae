// The document cards of the Cite view: pure helpers, unit-tested.
import type { CiteOutcome, CiteProgress, CiteSource, DocumentInfo, Error as AppError } from "./bindings";
import { formatBytes, kindLabel } from "./format";

export type CardState = "ready" | "invalid" | "citing" | "cited" | "saved" | "error";

export interface Card {
  /** Stable per document: its path, or "essay" for pasted text. */
  key: string;
  source: CiteSource;
  name: string;
  detail: string;
  state: CardState;
  problem: AppError | null;
  /** What Casebook's own reading saw that the person should know before citing. */
  note: string | null;
  progress: CiteProgress | null;
  jobId: string | null;
  outcome: CiteOutcome | null;
  savedPath: string | null;
  /** Where its review list was saved. */
  listPath: string | null;
}

export function cardFromDocument(doc: DocumentInfo): Card {
  return {
    key: doc.path,
    source: { type: "document", path: doc.path },
    name: doc.name,
    detail: `${kindLabel(doc.kind)} · ${formatBytes(doc.size)}`,
    state: doc.problem ? "invalid" : "ready",
    problem: doc.problem,
    note:
      doc.references === 0
        ? "No References section found. The service may refuse this document, or add a References section of its own."
        : null,
    progress: null,
    jobId: null,
    outcome: null,
    savedPath: null,
    listPath: null,
  };
}

export function cardFromEssay(text: string): Card {
  const words = text.trim().split(/\s+/).filter(Boolean).length;
  return {
    key: "essay",
    source: { type: "essay", text },
    note: null,
    name: "Pasted text",
    detail: `Text · ${words} word${words === 1 ? "" : "s"}`,
    state: "ready",
    problem: null,
    progress: null,
    jobId: null,
    outcome: null,
    savedPath: null,
    listPath: null,
  };
}

/** Cards that the Cite button sends: ready ones, and failed ones again. */
export function citable(cards: Card[]): Card[] {
  return cards.filter((c) => c.state === "ready" || c.state === "error");
}

/** What a card says while it is being cited. */
export function progressText(p: CiteProgress | null): string {
  if (!p) return "Waiting…";
  switch (p.type) {
    case "queued":
      return "Waiting for a free slot…";
    case "sending":
      return `Sending ${formatBytes(p.bytes)}…`;
    case "uploading":
      return `Sending… ${Math.floor((p.sent * 100) / Math.max(1, p.of))}% of ${formatBytes(p.of)}`;
    case "waiting":
      return `Waiting for the service… ${p.seconds} s`;
    case "rateLimited":
      return `The service is busy: retrying in ${p.seconds} s (attempt ${p.attempt} of ${p.of})`;
    case "receiving":
      return "Receiving the cited document…";
    case "summarizing":
      return "Comparing before and after…";
  }
}

/** A one-line result, e.g. "4 paragraphs changed · 6 citations · 5 references added". */
export function summaryText(o: CiteOutcome): string {
  const s = o.summary;
  const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  const citations = n(s.citationsInserted, "citation inserted", "citations inserted");
  return [
    n(s.paragraphsChanged, "paragraph changed", "paragraphs changed"),
    s.citationsInNotes > 0 ? `${citations} (${s.citationsInNotes} in speaker notes)` : citations,
    // A service that cites from the document's own list adds none: say so plainly.
    s.referencesAdded > 0 ? n(s.referencesAdded, "reference added", "references added") : "references unchanged",
  ].join(" · ");
}

/** How a queue of documents goes: of those sent (or being sent), how many are done. */
export function queueProgress(cards: Card[]): { started: number; done: number; failed: number } {
  const started = cards.filter((c) => ["citing", "cited", "saved", "error"].includes(c.state));
  const failed = started.filter((c) => c.state === "error").length;
  return { started: started.length, done: started.filter((c) => c.state !== "citing").length, failed };
}
