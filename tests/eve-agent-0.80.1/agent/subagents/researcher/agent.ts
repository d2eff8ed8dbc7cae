// Declared subagent: searches, then replies with its findings.
import { defineAgent } from "eve";
import { scriptedModel } from "../../lib/scripted-model";

export default defineAgent({
  description: "Researches a topic with web search and reports findings.",
  model: scriptedModel("researcher", "v3"),
  modelContextWindowTokens: 128_000,
});
