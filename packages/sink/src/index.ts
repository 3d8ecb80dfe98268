/**
 * `@tidemark/sink`: exactly-once ingestion. A pipeline is parallel {@link SinkWriter}s and one
 * {@link SinkCommitter} (two-phase commit with checkpoint states), or {@link runIngest}, which
 * drives both from a replayable source. Names are listed explicitly.
 */
export {
  CorruptStateError,
  DuplicateCommitError,
  IdentifierRegressionError,
  MissingDataFileError,
  SinkError,
  SinkUsageError,
  SourceError,
  SourceRecordError,
  StateMismatchError,
  WriterRoutingError,
} from './errors.js';
export { decodeSinkJson, encodeSinkJson } from './sink-json.js';
export { deserializeCommittables, serializeCommittables, type SinkCommittable } from './committable.js';
export {
  CHECKPOINT_STATE_VERSION,
  deserializeCheckpointState,
  serializeCheckpointState,
  type CheckpointState,
  type SourceOffset,
  type TableIdentity,
} from './checkpoint-state.js';
export {
  FileIOCheckpointStore,
  LocalDirCheckpointStore,
  openCheckpointStore,
  type CheckpointStateStore,
  type StateStoreLogger,
} from './state-store.js';
export { CRASH_POINTS, NO_CRASH, crashHookFromEnv, type CrashHook, type CrashPoint } from './crash-points.js';
export { lastSnapshotOf, tableFingerprint } from './table-identity.js';
export { SinkWriter, type SinkWriterOptions } from './sink-writer.js';
export {
  CHECKPOINT_PROPERTY,
  OFFSETS_PROPERTY,
  SinkCommitter,
  type CheckpointCommit,
  type SinkCommitterOptions,
  type SourcePosition,
} from './sink-committer.js';
export { JsonLinesFileSource, type ReplayableSource, type SourceBacklog, type SourceOpenOptions, type SourceRecord } from './source.js';
export {
  runIngest,
  type CheckpointCompaction,
  type CheckpointInfo,
  type IngestObserver,
  type IngestOptions,
  type IngestResumeInfo,
  type IngestSummary,
} from './ingest-driver.js';
export { combineObservers } from './ingest-observer.js';
export { IngestMetrics, type IngestHealth, type IngestMetricsOptions, type IngestState } from './ingest-metrics.js';
export { startMetricsServer, type MetricsServer, type MetricsServerOptions } from './metrics-server.js';

// ---- CDC sources (debezium-json, canal-json, maxwell-json) ----
export {
  CDC_FORMATS,
  type CdcFormat,
  CDC_ROW_KIND_FIELD,
  CdcEventError,
  CdcSchemaChangeError,
  type CdcChange,
  cdcChanges,
  CdcJsonLinesSource,
} from './cdc-source.js';

// ---- Kafka source ----
export { KafkaSource, defaultGroupId, type KafkaSourceOptions, type KafkaStart } from './kafka/kafka-source.js';
export {
  SASL_MECHANISMS,
  type FetchRequest,
  type FetchResult,
  type KafkaCallOptions,
  type KafkaClient,
  type KafkaClientFactory,
  type KafkaConnectionSettings,
  type KafkaMessage,
  type KafkaSaslMechanism,
  type KafkaSaslSettings,
  type KafkaTlsSettings,
  type PartitionWatermarks,
} from './kafka/kafka-client.js';
export {
  KafkaOffsetOutOfRangeError,
  KafkaRequestError,
  KafkaSettingsError,
  KafkaTopicMissingError,
  KafkaUnavailableError,
} from './kafka/kafka-errors.js';
export { KAFKA_FORMATS, type KafkaFormat } from './kafka/kafka-format.js';
export { parsePartitionList, parseSplit, type KafkaAssignment } from './kafka/kafka-offsets.js';
export { kafkajsClient } from './kafka/kafkajs-client.js';
