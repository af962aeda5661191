export { loadConfig } from "./config/load.js";
export { databasePath, resolveHome } from "./config/paths.js";
export {
  DEFAULT_CONFIG,
  type HearthConfig,
  type HearthConfigInput,
  JOURNAL_MODES,
  type JournalMode,
  SYNCHRONOUS_LEVELS,
  type SynchronousLevel,
} from "./config/schema.js";
export { ERROR_CODES, HearthError, type HearthErrorCode, isHearthError } from "./errors.js";
export { type PsProfile, type PsReport, runPs } from "./ops/ps.js";
export { claimGateway, type GatewayLock } from "./process/gateway-lock.js";
export {
  type GhostHolder,
  type Holder,
  type HolderJson,
  type HolderReport,
  readHolders,
} from "./process/holders.js";
export {
  currentIdentity,
  type Liveness,
  liveness,
  type ProcessIdentity,
} from "./process/identity.js";
export { processKind, setProcessKind } from "./process/kind.js";
export { PROCESS_KINDS, type PresenceRole, type ProcessKind } from "./process/lock-map.js";
export type { StructuralOptions } from "./process/structural.js";
export {
  isSqliteStore,
  type Store,
  type StoreBackend,
  sqliteOnly,
} from "./store/api.js";
export {
  AUDIT_ACTIONS,
  type Audit,
  type AuditAction,
  type AuditActor,
  type AuditEntry,
  type AuditInput,
  type AuditOptions,
} from "./store/audit.js";
export type {
  ArchiveAfterOptions,
  PopOptions,
  ReplaceSuffixOptions,
  ReplaceSuffixResult,
  WaitOptions,
} from "./store/edits.js";
export type { ExportFormat, ExportOptions } from "./store/export.js";
export type {
  GraphBlob,
  GraphCheckpointInput,
  GraphCheckpointKey,
  GraphCheckpointRecord,
  GraphCheckpoints,
  GraphListQuery,
  GraphWrite,
} from "./store/graph-checkpoints.js";
export type {
  ImportedMessage,
  ImportedSession,
  Imports,
  ImportWriteResult,
} from "./store/imports.js";
export type { Logger } from "./store/logger.js";
export type { AppendResult, LoadOptions, Messages } from "./store/messages.js";
export type { Meta } from "./store/meta.js";
export {
  MAX_METADATA_BYTES,
  MAX_METADATA_DEPTH,
  MAX_OWNER_ID_LENGTH,
} from "./store/metadata.js";
export { type OpenStoreOptions, openStore, type PgPoolLike } from "./store/open.js";
export { BUILTIN_PATTERNS as REDACTION_BUILTIN_PATTERNS } from "./store/redaction.js";
export type { CreateOptions } from "./store/session-create.js";
export type { Sessions } from "./store/sessions.js";
export { LATEST_SCHEMA_VERSION } from "./store/sqlite/migrations.js";
export { SqliteStore } from "./store/sqlite/store.js";
export type { StructuralContext } from "./store/sqlite/structural-context.js";
export { withStructuralGate } from "./store/sqlite/structural-context.js";
export type { HealthDay, HealthSample, Stats } from "./store/stats.js";
export type { JsonParts } from "./store/transcript-json.js";
export type {
  DurabilityReport,
  HandoffState,
  JsonObject,
  JsonValue,
  ListSessionsOptions,
  Message,
  MessageContent,
  MessageRole,
  NewMessage,
  NewSession,
  Page,
  SearchHit,
  SearchOptions,
  Session,
  SessionSort,
  StoreCounts,
  TitleSource,
  TranscriptEntry,
} from "./store/types.js";
export type { JsonSchema, Tool, ToolCall, ToolContext, ToolSpec } from "./turn/tools/types.js";
