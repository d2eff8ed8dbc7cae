import { describe, expect, it } from "vitest";
import { expiresIn } from "./countdown";

describe("expiresIn", () => {
  const at = "2026-11-25T10:15:00Z";
  const ms = (iso: string) => Date.parse(iso);

  it("counts minutes and seconds down to the expiry", () => {
    expect(expiresIn(at, ms("2026-11-25T10:10:28Z"))).toBe("Expires in 4:32");
    expect(expiresIn(at, ms("2026-11-25T10:14:59.500Z"))).toBe("Expires in 0:01");
    expect(expiresIn(at, ms("2026-11-25T09:12:55Z"))).toBe("Expires in 1:02:05");
  });

  it("says Expired once the time has passed", () => {
    expect(expiresIn(at, ms("2026-11-25T10:15:00Z"))).toBe("Expired");
    expect(expiresIn(at, ms("2026-11-26T00:00:00Z"))).toBe("Expired");
  });

  it("says nothing without a readable time", () => {
    expect(expiresIn(undefined, 0)).toBeNull();
    expect(expiresIn("soon", 0)).toBeNull();
  });
});
