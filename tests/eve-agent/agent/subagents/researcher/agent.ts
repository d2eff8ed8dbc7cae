import { defineAgent } from "eve";
import { scriptedModel } from "../../lib/scripted-model";

export default defineAgent({
  description: "Researches a question with web search and returns findings with sources.",
  model: scriptedModel,
  defaultTools: false,
  // As on the root: a scripted model has no catalog entry, and eve build asks for one.
  modelContextWindowTokens: 200_000,
});
