/**
 * `@tidemark/format`: Paimon's on-disk formats (types, schemas, BinaryRow, bucket hashing, partition
 * paths, snapshot/schema/tag JSON, Avro manifests, deletion vectors, Parquet). Names are listed
 * explicitly; the Avro field plumbing of the manifest codecs stays internal.
 */
export { CorruptFileError, FormatError, SchemaError } from './errors.js';
export {
  arrowFieldId,
  KEY_FIELD_ID_START,
  KEY_FIELD_PREFIX,
  keyValueFileFields,
  keyValuePlainColumns,
  PARQUET_FIELD_ID_KEY,
  SEQUENCE_NUMBER_FIELD_ID,
  SEQUENCE_NUMBER_FIELD_NAME,
  timestampUnit,
  toArrowField,
  toArrowSchema,
  toArrowType,
  VALUE_KIND_FIELD_ID,
  VALUE_KIND_FIELD_NAME,
} from './arrow-types.js';
export { RangeBlob } from './range-blob.js';
export {
  conformToPaimonTypes,
  ParquetDataFile,
  readParquetFile,
  type ParquetDecodeOptions,
  type ParquetReadOptions,
  type ParquetRowGroupExtent,
} from './parquet-reader.js';
export {
  decodeColumnIndex,
  decodeOffsetIndex,
  type ParquetColumnPages,
  type ParquetPageLocation,
  type ParquetPageStats,
} from './parquet-page-index.js';
export { fileIOSource, openOrcFile, readOrcFile, type OrcFileReadOptions } from './orc-data-file.js';
export type { OrcLiteral, OrcPredicate } from '@tidemark/orc';
export { zoneOffsetSeconds } from '@tidemark/orc';
export { isOrc, readOrcRecords } from './orc-records.js';
export { readManifestRecords } from './manifest-records.js';
export {
  encodeParquetIpc,
  parquetEncodeSettings,
  prepareParquetInput,
  utf8Vector,
  writeParquetFile,
  type ParquetCompression,
  type ParquetEncodeSettings,
  type ParquetWriteOptions,
  type PreparedParquetInput,
} from './parquet-writer.js';
export { concatParquetFiles, rowGroupCopyBlocker } from './parquet-concat.js';
export { encodeParquetStream, type ParquetStreamOptions } from './parquet-stream-writer.js';
export { ParquetRowGroupStream, type ParquetRowGroupStreamOptions } from './parquet-row-group-stream.js';
export { ipcSegmentSchema, joinIpcStreams, sameIpcSchema, scanIpcStream, type IpcStreamSegment } from './ipc-stream.js';
export {
  DEFAULT_ROW_GROUP_ROWS,
  defaultParquetWorkerCount,
  encodeParquetAsync,
  encodeParquetRowGroupsAsync,
  parallelRowGroupRows,
  ParquetEncodeError,
  ParquetWorkerPool,
  sharedParquetWorkerPool,
  type EncodeParquetAsyncOptions,
  type EncodeRowGroupsOptions,
  type ParquetDecodeJob,
  type ParquetWorkerPoolOptions,
} from './parquet-worker-pool.js';
export {
  decodeInt96,
  int96ToEpochNanos,
  readParquetFooter,
  type ParquetColumnChunkStats,
  type ParquetFooter,
  type ParquetLeafColumn,
  type ParquetRowGroupInfo,
  type ParquetStatValue,
  type ReadFooterOptions,
} from './parquet-footer.js';
export {
  MAX_LENGTH,
  type ArrayType,
  type AtomicType,
  type AtomicTypeRoot,
  type BinaryType,
  type CharType,
  type DataField,
  type DataType,
  type DecimalType,
  type MapType,
  type MultisetType,
  type RowType,
  type TimestampType,
  type TimeType,
} from './types.js';
export { decimalToPlainString, isDecimal, isTimestamp, type Decimal, type Timestamp, type Value } from './values.js';
export {
  javaDoubleToString,
  javaFloatToString,
  JsonNumber,
  parseJson,
  stringifyJackson,
  type JsonObject,
  type JsonValue,
  type ParseJsonOptions,
} from './json.js';
export { dataFieldToJson, isNumeric, parseDataFieldJson, parseTypeJson, parseTypeString, typeToJson, typeToString } from './type-json.js';
export {
  CURRENT_SCHEMA_VERSION,
  fieldById,
  logicalRowType,
  parseSchema,
  serializeSchema,
  trimmedPrimaryKeys,
  type TableSchema,
} from './schema.js';
export { BATCH_COMMIT_IDENTIFIER, SNAPSHOT_VERSION, parseSnapshot, serializeSnapshot, type CommitKind, type Snapshot } from './snapshot.js';
export { parseTag, serializeTag, type Tag, type TagDuration } from './tag.js';
export {
  bigIntToBytes,
  binaryRowBody,
  bytesToBigInt,
  decodeBinaryRow,
  deserializeBinaryRow,
  encodeBinaryRow,
  nullBitsSizeInBytes,
  serializeBinaryRow,
} from './binary-row.js';
export { murmurHash, PAIMON_HASH_SEED } from './murmur-hash.js';
export {
  BLOOM_FILTER_DEFAULT_FPP,
  BLOOM_FILTER_DEFAULT_ITEMS,
  BLOOM_FILTER_INDEX,
  BloomFilterIndexReader,
  BloomFilterIndexWriter,
  bloomFilterSupports,
} from './file-index/bloom-filter-index.js';
export { BloomFilter64, bloomFilterSize } from './file-index/bloom-filter-64.js';
export { fastHashOf, longHash, type FastHash } from './file-index/fast-hash.js';
export {
  FILE_INDEX_MAGIC,
  FILE_INDEX_VERSION,
  FileIndexFile,
  writeFileIndex,
  type FileIndexBodyRange,
} from './file-index/file-index-format.js';
export { fileIndexMightContain } from './file-index/file-index-probe.js';
export { xxHash64 } from './file-index/xxhash64.js';
export { bucketOf, bucketOfValues } from './bucket.js';
export {
  DEFAULT_PARTITION_NAME,
  escapePathName,
  formatDate,
  localDateTimeToString,
  parsePartitionPath,
  partitionPath,
  unescapePathName,
  type PartitionPathOptions,
} from './partition-path.js';
export { AVRO_CODEC_NAMES, getAvroCodec, type AvroCodec, type AvroCodecName, type AvroCodecOptions } from './avro-codecs.js';
export {
  avroTypeForSchema,
  avroBlockRecords,
  readAvroBlocks,
  readAvroHeader,
  readAvroRecords,
  writeAvroFile,
  type AvroBlock,
  type AvroHeader,
  type AvroReadOptions,
  type AvroRecord,
  type AvroSchemaJson,
  type AvroWriteOptions,
} from './avro-container.js';
export {
  INDEX_MANIFEST_ENTRY_SCHEMA,
  INDEX_MANIFEST_FORMAT_VERSION,
  MANIFEST_ENTRY_SCHEMA,
  MANIFEST_FILE_META_SCHEMA,
  MANIFEST_FORMAT_VERSION,
} from './manifest-schemas.js';
export { EMPTY_ROW_BYTES, EMPTY_SIMPLE_STATS, type ManifestIO, type SimpleStats } from './manifest-fields.js';
export { ByteArena, EncodedSimpleStats, type StatsLayout } from './manifest-stats.js';
export type { ManifestEntryDecodeOptions } from './manifest-entry-decoder.js';
export { ManifestEntryWalker } from './manifest-entry-walker.js';
export {
  decodeManifestList,
  manifestFileMetaFromAvro,
  manifestFileMetaToAvro,
  readManifestList,
  writeManifestList,
  writeManifestListTo,
  type ManifestFileMeta,
} from './manifest-file-meta.js';
export {
  decodeManifestEntries,
  decodeManifestEntryBatches,
  FILE_SOURCE_APPEND,
  FILE_SOURCE_COMPACT,
  fileEntryIdentity,
  manifestEntryFromAvro,
  manifestEntryToAvro,
  newDataFileMeta,
  readManifestEntries,
  writeManifestFile,
  writeManifestFileTo,
  type DataFileMeta,
  type DataFileMetaInit,
  type FileKind,
  type ManifestDecodeOptions,
  type ManifestEntry,
} from './manifest-entry.js';
export {
  decodeIndexManifest,
  INDEX_TYPE_DELETION_VECTORS,
  INDEX_TYPE_HASH,
  indexManifestEntryFromAvro,
  indexManifestEntryToAvro,
  readIndexManifest,
  writeIndexManifest,
  writeIndexManifestTo,
  type DeletionVectorRange,
  type GlobalIndexMeta,
  type IndexManifestEntry,
} from './index-manifest.js';
export {
  decodeDeletionVector,
  decodeDeletionVectorFile,
  encodeDeletionVectorFile,
  DELETION_VECTOR_FILE_VERSION,
  DV_MAX_POSITION_BITMAP32,
  MutableDeletionVector,
  type EncodedDeletionVectorFile,
  DV_MAGIC_BITMAP32,
  DV_MAGIC_BITMAP64,
  readDeletionVector,
  readDeletionVectors,
  readDeletionVectorsAt,
  type DeletionVector,
  type DeletionVectorLocation,
} from './deletion-vector.js';
export { MutableRoaringBitmap32, RoaringBitmap32, RoaringBitmap64, RoaringFormatError } from './roaring.js';

// ---- used by the write path of primary-key tables, dynamic buckets and integrity checks ----
export {
  INDEX_FILE_PREFIX,
  type IndexFileMeta,
  decodeHashIndex,
  encodeHashIndex,
  hashIndexFileMeta,
  deletionVectorsIndexFileMeta,
  indexFileName,
  indexManifestEntryOf,
  keyHash,
} from './hash-index.js';
export { partitionValueStrings } from './partition-path.js';
