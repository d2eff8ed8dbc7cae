import { defineTool } from "eve/tools";
import { z } from "zod";

// Deterministic fake sources: the same query always gives the same list, so tests can
// assert on titles and URLs without any network.
export function fakeSources(query: string) {
  const slug =
    query
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 40) || "topic";
  return [1, 2, 3].map((n) => ({
    title: `Source ${n} on ${query.slice(0, 60)}`,
    url: `https://example.org/${slug}/${n}`,
    snippet: `Finding ${n} about ${query.slice(0, 60)}.`,
  }));
}

// Shared by the root agent and the researcher: a declared subagent inherits no tools.
export const searchTool = defineTool({
  description: "Search the web for sources about a query.",
  inputSchema: z.object({ query: z.string() }),
  async execute({ query }) {
    return { sources: fakeSources(query) };
  },
});
