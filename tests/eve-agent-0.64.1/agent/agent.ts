// Root agent: a scripted model instead of a provider, so the real eve server
// runs offline (no network, no API key). See lib/scripted-model.ts.
import { defineAgent } from "eve";
import { scriptedModel } from "./lib/scripted-model";

export default defineAgent({
  model: scriptedModel("root", "v3"),
  // The scripted model has no real window; a fixed size keeps eve from
  // looking the model up in a gateway catalogue.
  modelContextWindowTokens: 128_000,
});
