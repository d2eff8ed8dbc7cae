import { describe, expect, it } from "vitest";
import { WriteClock } from "./writes";

describe("WriteClock", () => {
  it("keeps a read that no write overtook", () => {
    const clock = new WriteClock();
    const current = clock.read();
    expect(current()).toBe(true);
  });

  it("drops a read that a write started after", () => {
    const clock = new WriteClock();
    const stale = clock.read();
    clock.write();
    const fresh = clock.read();
    expect(stale()).toBe(false);
    expect(fresh()).toBe(true);
  });

  it("keeps a read that started after the write", () => {
    const clock = new WriteClock();
    clock.write();
    const after = clock.read();
    expect(after()).toBe(true);
  });
});
