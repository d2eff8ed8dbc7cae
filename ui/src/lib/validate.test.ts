import { describe, expect, it } from "vitest";
import { validateBaseUrl, validateBounds, validateEveBase } from "./validate";

describe("validateBaseUrl", () => {
  it("accepts https anywhere and http only on this computer", () => {
    expect(validateBaseUrl("https://api.example.com")).toBeNull();
    expect(validateBaseUrl("http://127.0.0.1:8080")).toBeNull();
    expect(validateBaseUrl("http://localhost:3000/base")).toBeNull();
    expect(validateBaseUrl("http://example.com")).toMatch(/https/);
    expect(validateBaseUrl("example.com")).toMatch(/full address/);
    expect(validateBaseUrl("https://u:p@example.com")).toMatch(/user name/);
    expect(validateBaseUrl("ftp://example.com")).toMatch(/scheme/);
  });
});

describe("validateBounds", () => {
  it("names the field that is wrong", () => {
    expect(validateBounds("1", "2")).toEqual({ min: null, max: null });
    expect(validateBounds("3", "1").min).toMatch(/maximum/);
    expect(validateBounds("x", "2").min).toMatch(/whole number/);
    expect(validateBounds("-1", "2").min).not.toBeNull();
    expect(validateBounds("1", "2.5").max).toMatch(/whole number/);
  });

  it("sets no upper bound of its own: the service's contract shows none", () => {
    expect(validateBounds("1", "9")).toEqual({ min: null, max: null });
    expect(validateBounds("6", "6")).toEqual({ min: null, max: null });
    expect(validateBounds("0", "1000")).toEqual({ min: null, max: null });
    expect(validateBounds("12", "7").min).toMatch(/maximum/);
  });

  it("refuses only numbers too large to send", () => {
    expect(validateBounds("0", "4294967295")).toEqual({ min: null, max: null });
    expect(validateBounds("0", "4294967296").max).toMatch(/4294967295/);
    expect(validateBounds("99999999999999999999", "1").min).toMatch(/4294967295/);
  });
});

describe("validateEveBase", () => {
  it("takes eve's two agent path shapes, the root and empty (the default)", () => {
    for (const ok of ["", "/eve/v1", "/eve/v1/", "/eve/researcher/v1", " /eve/agents/researcher/eve/v1 ", "/api/eve/v1"]) {
      expect(validateEveBase(ok), ok).toBeNull();
    }
  });
  it("says why anything else is refused", () => {
    expect(validateEveBase("eve/v1")).toMatch(/start with \//);
    expect(validateEveBase("https://x.example/eve/v1")).toMatch(/not a URL/);
    expect(validateEveBase("/")).toMatch(/Name a path/);
    expect(validateEveBase("/eve//v1")).toMatch(/empty/);
    expect(validateEveBase("/eve/../v1")).toMatch(/\.\./);
    expect(validateEveBase("/eve/v1?x=1")).toMatch(/Only letters/);
    expect(validateEveBase("/eve/a b/v1")).toMatch(/Only letters/);
  });
});
