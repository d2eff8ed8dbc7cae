// Typed calls into the Rust side. Every type here is generated from Rust
// (bindings.ts); errors arrive as `{ code, message }` and the UI switches on `code`.
import { invoke } from "@tauri-apps/api/core";
import type { AppInfo, DocumentInfo, Error as AppError, Health, KeyStatus, Service, Settings } from "./bindings";

export type { AppError };

export function isAppError(value: unknown): value is AppError {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { code?: unknown }).code === "string" &&
    typeof (value as { message?: unknown }).message === "string"
  );
}

/** Any rejection as an AppError, so views have one shape to show. */
export function toAppError(value: unknown): AppError {
  if (isAppError(value)) return value;
  return { code: "protocol", message: String(value) };
}

export const api = {
  appInfo: () => invoke<AppInfo>("app_info"),
  updateSettings: (settings: Settings) => invoke<AppInfo>("update_settings", { settings }),
  health: () => invoke<Health>("health"),
  inspectDocuments: (paths: string[]) => invoke<DocumentInfo[]>("inspect_documents", { paths }),
  pickDocuments: () => invoke<DocumentInfo[]>("pick_documents"),
  keyStatus: () => invoke<KeyStatus[]>("key_status"),
  setKey: (service: Service, key: string) => invoke<KeyStatus>("set_key", { service, key }),
  deleteKey: (service: Service) => invoke<KeyStatus>("delete_key", { service }),
};
