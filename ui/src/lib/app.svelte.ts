// App-wide state shared by the views: what the backend is, and which view shows.
import type { AppInfo } from "./bindings";

export type View = "cite" | "missions" | "settings";

export const app = $state<{ info: AppInfo | null; view: View; opened: string[] }>({
  info: null,
  view: "cite",
  // Paths from the command line or a later start ("Open with"), for the Cite view to take.
  opened: [],
});
