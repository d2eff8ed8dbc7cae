import { defineTool } from "eve/tools";
import { always } from "eve/tools/approval";
import { z } from "zod";

// Gated on every call so the approval scenario always pauses for a person.
export default defineTool({
  description: "Publish a note to the team's notebook.",
  inputSchema: z.object({ title: z.string(), body: z.string() }),
  approval: {
    request: always(),
    prompt: ({ input }) => `Publish the note "${input.title}"?`,
  },
  async execute({ title }) {
    return { published: true, url: `https://example.org/notes/${encodeURIComponent(title)}` };
  },
});
