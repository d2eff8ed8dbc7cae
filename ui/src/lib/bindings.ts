// Generated from the Rust types by `make bindings` (src-tauri/core/src/bindings.rs). Do not edit.

export type ErrorCode = "unauthorized" | "rate_limited" | "too_large" | "invalid_input" | "empty_file" | "not_a_document" | "legacy_format" | "encrypted_document" | "macro_enabled" | "template_or_show" | "unsupported_document" | "corrupt_document" | "unsafe_document" | "io" | "keyring_unavailable" | "network" | "timeout" | "server" | "protocol" | "not_found" | "conflict" | "cancelled" | "internal";

export type Error = { code: ErrorCode, message: string, 
/**
 * Seconds until a retry is allowed, when the service said so.
 */
retryAfterSecs?: number, 
/**
 * The HTTP status the service answered with, when there was one.
 */
status?: number, 
/**
 * The service's own code for the failure (eve's `code`: `session_not_ready`,
 * `session_not_active`, ...), when it gave one. Casebook decides on `code`; this is
 * shown, and tells apart failures that share a status.
 */
serviceCode?: string, };

export type DocKind = "docx" | "pptx";

export type DocumentInfo = { path: string, name: string, size: number, 
/**
 * Set when the file can be cited.
 */
kind: DocKind | null, 
/**
 * Why the file cannot be cited, when it cannot.
 */
problem: Error | null, 
/**
 * The entries Casebook's own reading found in its References section: `Some(0)`
 * when it has none, which a service may refuse, or answer by adding one. `None`
 * when it was not read.
 */
references: number | null, };

export type Service = "citations" | "investigations";

export type KeySource = "keyring" | "environment" | "none";

export type KeyStatus = { service: Service, source: KeySource, masked: string | null, };

export type Mode = "every" | "every_other" | "random";

export type CiteOptions = { mode: Mode, minCitations: number, maxCitations: number, 
/**
 * Repeatable random mode, where the service supports it.
 */
seed?: number, };

export type Renderer = "auto" | "gpu" | "software";

export type Settings = { 
/**
 * Talk to the built-in sandbox instead of `base_url`.
 */
sandbox: boolean, 
/**
 * The real services' base URL, once the user has connected an account.
 */
baseUrl: string | null, 
/**
 * The investigation service's API base under it: `None` for eve's single root agent
 * (`/eve/v1`), or one agent of several (`/eve/<agent>/v1`, `/eve/agents/<agent>/eve/v1`).
 */
eveBase?: string, 
/**
 * The citation options last used.
 */
citeOptions: CiteOptions, 
/**
 * How the windows are drawn; takes effect at the next start.
 */
renderer: Renderer, 
/**
 * Cited Word documents are saved for review in Word (each citation a tracked
 * change) unless asked otherwise: the choice last made.
 */
saveForReview: boolean, };

export type BackendMode = "sandbox" | "remote";

export type AppInfo = { version: string, mode: BackendMode, 
/**
 * Where requests go now: the sandbox's loopback URL in sandbox mode.
 */
baseUrl: string, 
/**
 * The investigation service's API base new missions start under.
 */
eveBase: string, dataDir: string, settings: Settings, 
/**
 * Test builds only: the UI exposes its test globals.
 */
testHooks: boolean, };

export type Health = { ok: boolean, baseUrl: string, detail: string, };

export type AgentInfo = { 
/**
 * The API base it was asked at.
 */
apiBase: string, name: string | null, description: string | null, 
/**
 * The model the agent runs on (`agent.model.id`).
 */
model: string | null, 
/**
 * `development` or `production`.
 */
mode: string | null, 
/**
 * The info answer's own format version (eve writes 1), not the agent's.
 */
infoVersion: bigint | null, };

export type BudgetLevel = "ok" | "warning" | "exceeded";

export type BudgetUse = { spentUsd: number, budgetUsd: number, 
/**
 * Whole percent, rounded down (so 79.9% does not read as 80%).
 */
percent: number, level: BudgetLevel, 
/**
 * "$4.10 of $5.00 — 82% of the budget", and "… over the budget by $0.40" past it.
 */
text: string, };

export type Paragraph = { index: number, text: string, slide?: number, style?: string, 
/**
 * A slide's speaker notes, not the slide itself (a service may cite both).
 */
notes?: boolean, };

export type Parsed = { paragraphs: Array<Paragraph>, references: Array<string>, referencesHeading: string | null, 
/**
 * Fields the contract does not name, as the service sent them.
 */
extra: Record<string, unknown>, };

export type PreviewSource = { "type": "service" } | { "type": "local", note: string, };

export type Preview = { "type": "paragraphs", parsed: Parsed, source: PreviewSource, } | { "type": "raw", 
/**
 * Pretty-printed JSON, or the text itself, cut to [`MAX_PREVIEW_TEXT_BYTES`].
 */
text: string, 
/**
 * Why the answer is shown raw, for a person.
 */
note: string, };

export type OutputKind = "docx" | "pptx" | "text";

export type Segment = { text: string, inserted: boolean, };

export type ChangedParagraph = { index: number, slide: number | null, 
/**
 * In the slide's speaker notes.
 */
notes: boolean, before: string, after: Array<Segment>, };

export type CiteSummary = { paragraphsChanged: number, 
/**
 * Every citation found in what citing added, wherever it stands in a paragraph.
 */
citationsInserted: number, 
/**
 * Of those, the ones in speaker notes.
 */
citationsInNotes: number, referencesAdded: number, changes: Array<ChangedParagraph>, 
/**
 * The References entries citing added, as the cited document has them, in its order
 * (those the original did not have).
 */
newReferences: Array<string>, };

export type CiteSource = { "type": "document", path: string, } | { "type": "essay", text: string, };

export type CiteProgress = { "type": "queued", jobId: string, } | { "type": "sending", bytes: number, } | { "type": "uploading", sent: number, of: number, } | { "type": "waiting", seconds: number, } | { "type": "rateLimited", seconds: number, attempt: number, of: number, } | { "type": "receiving" } | { "type": "summarizing" };

export type CiteOutcome = { jobId: string, kind: OutputKind, size: number, summary: CiteSummary, 
/**
 * Set when the result is good but what changed could not be worked out.
 */
summaryNote: string | null, 
/**
 * A review copy for Word can be saved: a Word document, its summary read.
 */
reviewable: boolean, };

export type SavedFile = { jobId: string, path: string, };

export type SaveReport = { jobId: string, path: string | null, error: Error | null, };

export type MissionSpec = { missionType: string, budgetType: string, budgetCents: number, objective: string, };

export type CancelAck = { ok: boolean, sessionId: string | null, 
/**
 * `accepted` (the seeds), `no_active_turn` (eve before 1.0), or none (eve 1.x).
 */
status: string | null, 
/**
 * eve 1.x: the cancel's own delivery.
 */
deliveryId: string | null, 
/**
 * The service said there was no turn to cancel: nothing will come on the stream.
 */
nothingToCancel: boolean, };

export type InputResponse = { requestId: string, optionId?: string, text?: string, };

export type Delivered = { 
/**
 * eve's id for this message, which its stream's records name: kept when given.
 */
deliveryId: string | null, };

export type Role = "user" | "assistant";

export type Message = { role: Role, text: string, 
/**
 * The assistant narrating work it goes on with (before a tool call), not replying.
 */
narration: boolean, 
/**
 * Still streaming.
 */
open: boolean, 
/**
 * Files that came with it.
 */
files?: Array<FileRef>, };

export type RequestOption = { id: string, label: string, description?: string, 
/**
 * How to draw it: `primary`, `danger` or `default` (eve's hint; open).
 */
style?: string, };

export type FileRef = { 
/**
 * Its name, made safe to show ([`super::json::file_ref`]): "file" when it has none.
 */
name: string, mediaType: string, size?: number, 
/**
 * Where to open it: kept only when it is http(s), so a `data:`, `javascript:`,
 * `file:` or `blob:` address never becomes a link.
 */
url?: string, };

export type AttachmentChoice = { path: string, name: string, mediaType: string, size: number, };

export type PendingRequest = { 
/**
 * The id an answer names (eve 27: the interaction's id).
 */
requestId: string, 
/**
 * `question`, `tool-approval`, `session-limit`, `approval`, `budget`, ... (open).
 */
kind: string, 
/**
 * It asks to approve a call, not a question: the window offers approve and deny.
 */
approval: boolean, prompt: string, 
/**
 * A short heading above the prompt (eve 27's `title`).
 */
title?: string, options: Array<RequestOption>, allowFreeform: boolean, 
/**
 * How it ended: eve 27's closed set (`accepted`, `declined`, `invalid`, `failed`,
 * `withdrawn`, `interrupted`, `abandoned`, `expired`), B's (`answered`, `approved`,
 * `denied`, `ignored`, …) or `cancelled` with its turn; none while pending.
 */
outcome?: string, 
/**
 * Why it ended, when eve says (`superseded-by-message`).
 */
reason?: string, 
/**
 * How it ended, in plain words ("Withdrawn by your message"): what the window and
 * `mission show` say.
 */
outcomeText?: string, 
/**
 * The answer given: the chosen option's label, or the text.
 */
answer?: string, 
/**
 * While still open: what became of the last answer the service took but did not
 * apply (eve 1.x's `response.settled` `refused`, `expired`, …), in plain words.
 */
refusal?: string, };

export type SignIn = { 
/**
 * What to sign in to (eve's `name`).
 */
name: string, description?: string, url?: string, userCode?: string, expiresAt?: string, 
/**
 * What to do on the page, in the service's words.
 */
instructions?: string, 
/**
 * The attempt shown (B's `attemptId`; 27: its interaction): a newer attempt for the
 * same service replaces it in this item.
 */
attempt?: string, 
/**
 * `authorized`, `declined`, `accepted`, … once it ended; `superseded` while a newer
 * attempt is awaited.
 */
outcome?: string, 
/**
 * How it ended, in plain words ("Signed in").
 */
outcomeText?: string, };

export type ItemKind = "user" | "assistant" | "reasoning" | "tool" | "question" | "sign-in" | "failure" | "turn" | "result";

export type StepStatus = "running" | "completed" | "failed" | "rejected" | "cancelled";

export type Source = { url: string, title?: string, 
/**
 * The item that first cited it (the sources list links there).
 */
item: number, 
/**
 * That step in one line ("Searched: urban heat exposure").
 */
foundBy?: string, };

export type ChildRef = { callId: string, sessionId: string, streamPath?: string, };

export type Step = { 
/**
 * `tool`, `task` or `agent`.
 */
kind: string, name: string, 
/**
 * What the step was asked, readable: the query or URL when there is one, else its
 * input as JSON.
 */
input: string, status: StepStatus, output?: string, error?: string, sources: Array<Source>, 
/**
 * A sub-agent's own session, which opens to show its conversation (read only then).
 */
child?: ChildRef, };

export type Item = { 
/**
 * Its place in the conversation, from 0; stable once given.
 */
index: number, kind: ItemKind, 
/**
 * A message's or reasoning's whole text so far; a failure's message; a turn's label;
 * a step's or question's one-line summary.
 */
text: string, 
/**
 * Still streaming (a message, reasoning), running (a step) or pending (a question).
 */
open: boolean, 
/**
 * An assistant message narrating work it goes on with (before a tool call), not
 * a reply.
 */
narration: boolean, 
/**
 * A finished assistant message as HTML from its Markdown (see `markdown`).
 */
html?: string, 
/**
 * Where each top-level block of `html` starts, in UTF-16 code units (see
 * `markdown::to_html_blocks`): a window following a long reply draws its last blocks.
 */
htmlBlocks?: Array<number>, step?: Step, request?: PendingRequest, signIn?: SignIn, 
/**
 * Files that came with a message, or that the agent made.
 */
files?: Array<FileRef>, 
/**
 * A mission's first message, read as what it was made from: the window shows its
 * objective with its budget, not the four labelled lines the service was sent.
 */
mission?: MissionSpec, 
/**
 * The records it was made from (by `seq`; 0 when built from bare events).
 */
firstSeq: number, lastSeq: number, };

export type ConversationFacts = { 
/**
 * How many records it was read from.
 */
records: number, 
/**
 * How many items the conversation has.
 */
items: number, 
/**
 * How many sources it found.
 */
sources: number, 
/**
 * What the agent does now ("Searching: urban heat exposure"), while something runs.
 */
activity?: string, 
/**
 * Spend so far in dollars, when the service reported any.
 */
spentUsd?: number, 
/**
 * The index of the report (the newest finished reply), if there is one.
 */
report?: number, 
/**
 * The spend against the mission's budget, when both are known: the verdict (and its
 * words) the window shows as core says it, the same as the CLI's.
 */
budget?: BudgetUse, };

export type ConversationChanges = { 
/**
 * Changed and new items, by index.
 */
items: Array<Item>, 
/**
 * Open items that only grew at the end of their text, as what they grew by (to
 * windows only: see [`Grown`]; empty elsewhere).
 */
appended: Array<TextAppended>, 
/**
 * Open items that closed with the text windows were sent, sent without it (to
 * windows only: see [`Grown`]; empty elsewhere).
 */
closed: Array<TextClosed>, 
/**
 * Sources found for the first time.
 */
sources: Array<Source>, facts: ConversationFacts, };

export type TextAppended = { index: number, 
/**
 * The length of the text it follows, in UTF-16 code units (JavaScript's `length`):
 * a window holding another length reads the item whole instead.
 */
from: number, text: string, lastSeq: number, };

export type TextClosed = { index: number, 
/**
 * As [`TextAppended`]'s.
 */
from: number, 
/**
 * What the text grew by since it was last sent (often nothing).
 */
text: string, narration: boolean, html?: string, htmlBlocks: Array<number>, lastSeq: number, };

export type ConversationSummary = { messages: Array<Message>, pending: Array<PendingRequest>, 
/**
 * Sign-ins asked for and not completed yet.
 */
signIns: Array<SignIn>, };

export type ConversationPage = { facts: ConversationFacts, 
/**
 * The index of the first of `items`.
 */
offset: number, items: Array<Item>, 
/**
 * The first sources found (at most a page; `facts.sources` says how many in all).
 */
sources: Array<Source>, };

export type ConversationHits = { 
/**
 * What was searched for, as asked (a window drawing answers as they come can tell
 * which query each one answers).
 */
query: string, 
/**
 * How many items match in all.
 */
total: number, 
/**
 * The first `limit` of them, in order.
 */
items: Array<ConversationHit>, };

export type ConversationHit = { index: number, kind: ItemKind, 
/**
 * The item's text around its first match, on one line, `…` where it was cut.
 */
snippet: string, };

export type MissionHits = { 
/**
 * What was searched for, as asked (answers drawn as they come say which query).
 */
query: string, hits: Array<MissionHit>, };

export type MissionHit = { sessionId: string, 
/**
 * The mission's objective, on one line.
 */
headline: string, status: MissionStatus, place: HitPlace, 
/**
 * The text around its first match, on one line, `…` where it was cut.
 */
snippet: string, };

export type HitPlace = { "type": "objective" } | { "type": "item", index: number, kind: ItemKind, };

export type SubAgent = { callId: string, sessionId: string, 
/**
 * The agent's name (`researcher`).
 */
name: string, 
/**
 * Where its session stands: `running` until its records say it waits or ended.
 */
status: MissionStatus, items: Array<Item>, 
/**
 * Every source it found, once per URL.
 */
sources: Array<Source>, messages: Array<Message>, facts: ConversationFacts, 
/**
 * Reading its stream failed this time: what is shown is what was kept, and why.
 */
stale?: string, 
/**
 * The last opening stopped at a bound before the newest record: open again for more.
 */
more: boolean, 
/**
 * When its stream was last read (Unix milliseconds); 0 if never.
 */
readAt: number, };

export type EventKind = "turn_started" | "plan" | "search_query" | "source_found" | "evidence" | "finding_verified" | "spend_updated" | "report_final" | "turn_completed" | "turn_cancelled" | "session_waiting" | "session_completed" | "unknown";

export type MissionEvent = { 
/**
 * The id the server put on this very event (its own SSE `id:` field, or `id` in an
 * NDJSON line). `None` when the event carried none, even if an earlier id is still the
 * stream's resume point; an empty id (the SSE reset) is `None` too. Only these ids are
 * used to recognise a repeated event.
 */
id: string | null, event: string, kind: EventKind, data: unknown, };

export type Card = { "type": "started", objective: string | null, budget: string | null, } | { "type": "plan", steps: Array<string>, } | { "type": "search", query: string, engine: string | null, } | { "type": "source", title: string, url: string | null, publisher: string | null, year: string | null, } | { "type": "evidence", quote: string | null, supports: string | null, url: string | null, } | { "type": "finding", claim: string, confidence: string | null, sources: Array<string>, } | { "type": "spend", text: string, } | { "type": "report", title: string | null, summary: string | null, findings: Array<string>, } | { "type": "note", text: string, } | { "type": "text", text: string, } | { "type": "raw", json: string, };

export type MissionStatus = "running" | "waiting" | "needs_input" | "complete" | "failed" | "cancelled" | "reconnecting" | "lost" | "error" | "expired";

export type MissionRecord = { sessionId: string, objective: string, missionType: string, budgetType: string, budgetCents: number, baseUrl: string, 
/**
 * The API base under `base_url` it was started on (`/eve/v1`, `/eve/<agent>/v1`, …).
 */
apiBase: string, status: MissionStatus, 
/**
 * Unix milliseconds.
 */
createdAt: number, updatedAt: number, lastEventId: string | null, eventCount: number, };

export type StoredEvent = { seq: number, event: MissionEvent, receivedAt: number, label: string, card: Card, };

export type EventFilter = { kind: string | null, search: string | null, };

export type KindCount = { event: string, label: string, count: number, };

export type EventPage = { 
/**
 * How many events pass the filter in all.
 */
total: number, 
/**
 * The position of the first of `events` among those that pass.
 */
offset: number, events: Array<StoredEvent>, };

export type MissionUpdate = { "type": "mission", mission: MissionRecord, } | { "type": "events", events: Array<StoredEvent>, replay: boolean, } | { "type": "conversation", page: ConversationPage, } | { "type": "items", changes: ConversationChanges, } | { "type": "status", status: MissionStatus, detail: string | null, code: ErrorCode | null, };

export type MissionStatusChanged = { sessionId: string, status: MissionStatus, };

export type ExportFormat = "markdown" | "json" | "report" | "docx";

export type SessionSource = "keyring" | "environment";

export type UsageCounter = { name: string, label: string, value: number, };

export type AccountKey = { name: string | null, masked: string | null, created: string | null, id: string | null, };

export type Account = { email: string | null, name: string | null, id: string | null, usage: Array<UsageCounter>, keys: Array<AccountKey>, 
/**
 * Whether the answer had a key list at all (an empty list is not a missing one).
 */
hasKeyList: boolean, 
/**
 * The whole answer as pretty JSON, for what Casebook does not know.
 */
raw: string, };

export type AccountView = { "state": "signedOut" } | { "state": "expired", message: string, source: SessionSource, } | { "state": "signedIn", account: Account, source: SessionSource, };

export type DropUpdate = { "type": "dragging" } | { "type": "left" } | { "type": "dropped", paths: Array<string>, };
