import type { DocKind } from "./bindings";

// Each formatter is made once: making an Intl formatter (what toLocaleTimeString does
// on every call) costs far more than using one, and a timeline formats many times a second.
// Made when first used, not on load: a formatter loads the locale's data (ICU), about 3 MB
// of the web process, which a window that shows no time never needs.
let clock: Intl.DateTimeFormat | undefined;
let dateTime: Intl.DateTimeFormat | undefined;

/** The time of day of `ms` (Unix milliseconds), to the second, in the user's locale. */
export function formatClock(ms: number): string {
  clock ??= new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return clock.format(ms);
}

/** The date and time of `ms` (Unix milliseconds), in the user's locale. */
export function formatDateTime(ms: number): string {
  dateTime ??= new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  return dateTime.format(ms);
}

/** Sizes as people read them: 930 B, 14.1 KB, 8.7 MB. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "—";
  if (bytes < 1000) return `${bytes} B`;
  const units = ["KB", "MB", "GB"];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function kindLabel(kind: DocKind | null): string {
  switch (kind) {
    case "docx":
      return "Word document";
    case "pptx":
      return "PowerPoint presentation";
    default:
      return "Not citable";
  }
}

/** Merges newly brought-in documents into a list, replacing entries for the same path. */
export function mergeByPath<T extends { path: string }>(current: T[], incoming: T[]): T[] {
  const byPath = new Map(current.map((d) => [d.path, d]));
  for (const doc of incoming) byPath.set(doc.path, doc);
  return [...byPath.values()];
}
