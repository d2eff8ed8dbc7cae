// Generated from the Rust types by `make bindings` (src-tauri/src/bindings.rs). Do not edit.

export type ErrorCode = "unauthorized" | "rate_limited" | "too_large" | "invalid_input" | "empty_file" | "not_a_document" | "legacy_format" | "encrypted_document" | "macro_enabled" | "template_or_show" | "unsupported_document" | "corrupt_document" | "unsafe_document" | "io" | "keyring_unavailable" | "network" | "timeout" | "server" | "protocol" | "not_found" | "conflict" | "cancelled";

export type Error = { code: ErrorCode, message: string, 
/**
 * Seconds until a retry is allowed, when the service said so.
 */
retryAfterSecs?: number, 
/**
 * The HTTP status the service answered with, when there was one.
 */
status?: number, };

export type DocKind = "docx" | "pptx";

export type DocumentInfo = { path: string, name: string, size: number, 
/**
 * Set when the file can be cited.
 */
kind: DocKind | null, 
/**
 * Why the file cannot be cited, when it cannot.
 */
problem: Error | null, };

export type Service = "citations" | "investigations";

export type KeySource = "keyring" | "environment" | "none";

export type KeyStatus = { service: Service, source: KeySource, masked: string | null, };

export type Mode = "sandbox" | "remote";

export type AppInfo = { version: string, mode: Mode, baseUrl: string, dataDir: string, };
