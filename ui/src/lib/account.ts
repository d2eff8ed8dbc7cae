// The account commands: who is signed in at the citation service, its usage and keys.
import { invoke } from "@tauri-apps/api/core";
import type { AccountView } from "./bindings";

/** Sent to the main window once the console's session is kept. */
export const ACCOUNT_EVENT = "account-changed";

export const accountApi = {
  account: () => invoke<AccountView>("account"),
  signIn: () => invoke<void>("sign_in"),
  signOut: () => invoke<AccountView>("sign_out"),
  openConsole: () => invoke<void>("open_console"),
};

/** "Ada Lovelace · ada@example.org", or null when the answer names nobody. */
export function who(name: string | null, email: string | null): string | null {
  const parts = [name, email].filter((p): p is string => !!p && p.trim() !== "");
  return parts.length ? parts.join(" · ") : null;
}
