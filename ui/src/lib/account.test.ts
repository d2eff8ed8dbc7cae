import { describe, expect, it } from "vitest";
import { who } from "./account";

describe("who", () => {
  it("joins the name and email the answer gave", () => {
    expect(who("Ada", "ada@example.org")).toBe("Ada · ada@example.org");
    expect(who(null, "ada@example.org")).toBe("ada@example.org");
    expect(who(" ", null)).toBeNull();
  });
});
