// Fake web search: always the same two sources under https://example.org/.
import { defineTool } from "eve/tools";
import { z } from "zod";
import { SOURCES } from "../lib/scripted-model";

export default defineTool({
  description: "Search the web for sources about a query.",
  inputSchema: z.object({ query: z.string() }),
  async execute({ query }) {
    return { query, sources: SOURCES };
  },
});
