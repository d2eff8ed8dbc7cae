// App-wide state shared by the views: what the backend is, and which view shows.
import type { AppInfo } from "./bindings";

export type View = "cite" | "missions" | "settings";

export const app = $state<{ info: AppInfo | null; view: View }>({ info: null, view: "cite" });
