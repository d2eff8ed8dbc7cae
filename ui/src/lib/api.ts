// Typed calls into the Rust side. Every type here is generated from Rust
// (bindings.ts); errors arrive as `{ code, message }` and the UI switches on `code`.
import { Channel, invoke } from "@tauri-apps/api/core";
import type {
  AgentInfo,
  AttachmentChoice,
  AppInfo,
  CancelAck,
  ConversationHits,
  ConversationPage,
  ConversationSummary,
  Delivered,
  InputResponse,
  CiteOptions,
  CiteOutcome,
  CiteProgress,
  CiteSource,
  DocumentInfo,
  DropUpdate,
  Error as AppError,
  EventFilter,
  EventPage,
  ExportFormat,
  Health,
  KeyStatus,
  KindCount,
  MissionHits,
  MissionRecord,
  MissionSpec,
  MissionUpdate,
  Preview,
  SaveReport,
  SubAgent,
  SavedFile,
  Service,
  Source,
  Settings,
} from "./bindings";

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
  /** What the agent at the investigation service's API base says of itself; null without an info route. */
  agentInfo: () => invoke<AgentInfo | null>("agent_info"),
  openedDocuments: () => invoke<string[]>("opened_documents"),
  /** `onMore` hears of each later start that brings documents. */
  watchOpenedDocuments: (onMore: Channel<null>) => invoke<void>("watch_opened_documents", { onMore }),
  watchDrops: (onDrop: Channel<DropUpdate>) => invoke<void>("watch_drops", { onDrop }),
  inspectDocuments: (paths: string[]) => invoke<DocumentInfo[]>("inspect_documents", { paths }),
  pickDocuments: () => invoke<DocumentInfo[]>("pick_documents"),
  keyStatus: () => invoke<KeyStatus[]>("key_status"),
  setKey: (service: Service, key: string) => invoke<KeyStatus>("set_key", { service, key }),
  deleteKey: (service: Service) => invoke<KeyStatus>("delete_key", { service }),
  preview: (source: CiteSource) => invoke<Preview>("preview", { source }),
  cite: (source: CiteSource, options: CiteOptions, onProgress: (p: CiteProgress) => void) => {
    const channel = new Channel<CiteProgress>();
    channel.onmessage = onProgress;
    return invoke<CiteOutcome>("cite", { source, options, onProgress: channel });
  },
  cancelCite: (jobId: string) => invoke<boolean>("cancel_cite", { jobId }),
  discardCite: (jobId: string) => invoke<void>("discard_cite", { jobId }),
  saveCited: (jobId: string) => invoke<SavedFile | null>("save_cited", { jobId }),
  saveForReview: (jobId: string) => invoke<SavedFile | null>("save_for_review", { jobId }),
  saveReviewList: (jobId: string) => invoke<SavedFile | null>("save_review_list", { jobId }),
  saveAllCited: (jobIds: string[], review: boolean) => invoke<SaveReport[]>("save_all_cited", { jobIds, review }),
  showInFolder: (path: string) => invoke<void>("show_in_folder", { path }),
  missionPreview: (spec: MissionSpec) => invoke<string>("mission_preview", { spec }),
  startMission: (spec: MissionSpec) => invoke<MissionRecord>("start_mission", { spec }),
  listMissions: () => invoke<MissionRecord[]>("list_missions"),
  /** Opens a mission's window, at item `item` when given (a search hit). */
  openMission: (sessionId: string, item: number | null = null) => invoke<void>("open_mission", { sessionId, item }),
  searchMissions: (query: string, limit: number) => invoke<MissionHits>("search_missions", { query, limit }),
  /** `records`: the new records too (the raw records view), not only what they change. */
  watchMission: (sessionId: string, onEvent: Channel<MissionUpdate>, records: boolean) =>
    invoke<void>("watch_mission", { sessionId, onEvent, records }),
  /** Whether the reader looks at this window: one they do not is sent what arrives once a second. */
  missionWindowLookedAt: (lookedAt: boolean) => invoke<void>("mission_window_looked_at", { lookedAt }),
  /** A page of the events that pass `filter`; `offset` null: the page(s) at the end. */
  missionEvents: (sessionId: string, filter: EventFilter, offset: number | null, limit: number) =>
    invoke<EventPage>("mission_events", { sessionId, filter, offset, limit }),
  missionKinds: (sessionId: string) => invoke<KindCount[]>("mission_kinds", { sessionId }),
  cancelMission: (sessionId: string) => invoke<CancelAck>("cancel_mission", { sessionId }),
  replyMission: (sessionId: string, message: string, attachments: string[] = []) =>
    invoke<Delivered>("reply_mission", { sessionId, message, attachments }),
  pickAttachment: () => invoke<AttachmentChoice | null>("pick_attachment"),
  answerMission: (sessionId: string, answers: InputResponse[]) =>
    invoke<Delivered>("answer_mission", { sessionId, answers }),
  missionConversation: (sessionId: string) => invoke<ConversationSummary>("mission_conversation", { sessionId }),
  missionItems: (sessionId: string, offset: number, limit: number) =>
    invoke<ConversationPage>("mission_items", { sessionId, offset, limit }),
  /** Opens a sub-agent the mission delegated to: its stream is read now, only now. */
  openSubagent: (sessionId: string, callId: string) =>
    invoke<SubAgent>("open_subagent", { sessionId, callId }),
  missionSources: (sessionId: string, offset: number, limit: number) =>
    invoke<Source[]>("mission_sources", { sessionId, offset, limit }),
  searchMission: (sessionId: string, query: string, limit: number) =>
    invoke<ConversationHits>("search_mission", { sessionId, query, limit }),
  exportMission: (sessionId: string, format: ExportFormat) =>
    invoke<string | null>("export_mission", { sessionId, format }),
  citeReport: (path: string) => invoke<void>("cite_report", { path }),
  handedOverReports: (paths: string[]) => invoke<string[]>("handed_over_reports", { paths }),
  openLink: (url: string) => invoke<void>("open_link", { url }),
};
