export {};
export * from './errors.js';
export * from './arrow-types.js';
export * from './range-blob.js';
export * from './parquet-reader.js';
export * from './wasm-trap-guard.js';
export * from './parquet-writer.js';
export * from './parquet-encode-pool.js';
export * from './parquet-footer.js';
export * from './types.js';
export * from './values.js';
export * from './json.js';
export * from './type-json.js';
export * from './schema.js';
export {
  BATCH_COMMIT_IDENTIFIER,
  SNAPSHOT_VERSION,
  parseSnapshot,
  serializeSnapshot,
  type CommitKind,
  type Snapshot,
} from './snapshot.js';
export * from './tag.js';
export * from './binary-row.js';
export * from './murmur-hash.js';
export * from './bucket.js';
export * from './partition-path.js';
export * from './avro-codecs.js';
export {
  avroTypeForSchema,
  readAvroHeader,
  readAvroRecords,
  writeAvroFile,
  type AvroHeader,
  type AvroReadOptions,
  type AvroRecord,
  type AvroSchemaJson,
  type AvroWriteOptions,
} from './avro-container.js';
export * from './manifest-schemas.js';
export { EMPTY_SIMPLE_STATS, type ManifestIO, type SimpleStats } from './manifest-fields.js';
export * from './manifest-file-meta.js';
export * from './manifest-entry.js';
export * from './index-manifest.js';
export * from './deletion-vector.js';
export * from './hash-index.js';
export * from './roaring.js';
