// A tool that always needs a person's approval before it runs.
import { defineTool } from "eve/tools";
import { always } from "eve/tools/approval";
import { z } from "zod";

export default defineTool({
  description: "Publish the report. Needs approval.",
  inputSchema: z.object({ title: z.string() }),
  approval: always(),
  async execute({ title }) {
    return { published: true, title };
  },
});
