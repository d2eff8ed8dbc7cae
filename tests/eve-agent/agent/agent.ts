import { defineAgent } from "eve";
import { scriptedModel } from "./lib/scripted-model";

export default defineAgent({
  model: scriptedModel,
  // Only our own tools: the defaults (bash, files, web) would want a sandbox or network.
  defaultTools: false,
  // Without it eve build looks the model up in the AI Gateway catalog (network) and fails.
  modelContextWindowTokens: 200_000,
});
