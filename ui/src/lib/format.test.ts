import { describe, expect, it } from "vitest";
import { formatBytes, formatClock, formatDateTime, kindLabel, mergeByPath } from "./format";

describe("formatBytes", () => {
  it("uses the unit people expect", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(999)).toBe("999 B");
    expect(formatBytes(14_470)).toBe("14 KB");
    expect(formatBytes(8_700_000)).toBe("8.7 MB");
    expect(formatBytes(-1)).toBe("—");
  });
});

describe("kindLabel", () => {
  it("names both kinds and says when a file cannot be cited", () => {
    expect(kindLabel("docx")).toBe("Word document");
    expect(kindLabel("pptx")).toBe("PowerPoint presentation");
    expect(kindLabel(null)).toBe("Not citable");
  });
});

describe("mergeByPath", () => {
  it("keeps order and replaces a document dropped twice", () => {
    const merged = mergeByPath(
      [{ path: "/a", n: 1 }, { path: "/b", n: 1 }],
      [{ path: "/a", n: 2 }, { path: "/c", n: 1 }],
    );
    expect(merged).toEqual([{ path: "/a", n: 2 }, { path: "/b", n: 1 }, { path: "/c", n: 1 }]);
  });
});

describe("formatClock and formatDateTime", () => {
  it("read as the locale's own formatting does", () => {
    const ms = Date.UTC(2026, 10, 23, 14, 5, 9);
    expect(formatClock(ms)).toBe(
      new Date(ms).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" }),
    );
    expect(formatDateTime(ms)).toBe(new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }));
    expect(formatClock(ms + 1000)).not.toBe(formatClock(ms));
  });
});
