/**
 * Data manifests (`manifest/manifest-*`): one {@link ManifestEntry} (ADD or DELETE of a data or
 * changelog file, with its {@link DataFileMeta}) per record.
 *
 * Number vs bigint: Avro longs are exposed as `number` (checked to be exact) except the sequence
 * numbers (`_MIN/_MAX_SEQUENCE_NUMBER`, `_WRITE_COLS_SEQUENCES`), which are `bigint`: they are
 * compared with the data files' `_SEQUENCE_NUMBER` Int64 column (a bigint in Arrow JS), and nothing
 * bounds them below 2^63 in Java. Sizes, row counts, schema ids, row ids and times stay far below
 * 2^53; a value beyond it is reported as a corrupt file instead of being rounded.
 */
import { writeAvroFile, type AvroRecord, type AvroWriteOptions } from './avro-container.js';
import { readManifestRecords } from './manifest-records.js';
import { decodeManifestEntriesFast, type ManifestEntryDecodeOptions } from './manifest-entry-decoder.js';
import { FormatError } from './errors.js';
import type { DataFileMeta, FileKind, ManifestEntry } from './data-file-meta.js';
import { FieldReader, avroBytes, avroOptBytes, checkVersion, statsToAvro, writeEncodedTo, type ManifestIO } from './manifest-fields.js';
import { MANIFEST_ENTRY_SCHEMA, MANIFEST_FORMAT_VERSION } from './manifest-schemas.js';

export {
  FILE_SOURCE_APPEND,
  FILE_SOURCE_COMPACT,
  newDataFileMeta,
  type DataFileMeta,
  type DataFileMetaInit,
  type FileKind,
  type ManifestEntry,
} from './data-file-meta.js';

function kindFromInt(kind: number, path: string): FileKind {
  if (kind === 0) return 'ADD';
  if (kind === 1) return 'DELETE';
  throw new FormatError(`${path}: unknown manifest entry _KIND ${kind} (expected 0 = ADD or 1 = DELETE)`);
}

function kindToInt(kind: FileKind): number {
  return kind === 'ADD' ? 0 : 1;
}

function dataFileMetaFromAvro(r: FieldReader): DataFileMeta {
  const sequences = r.optArray('_WRITE_COLS_SEQUENCES');
  return {
    fileName: r.string('_FILE_NAME'),
    fileSize: r.long('_FILE_SIZE'),
    rowCount: r.long('_ROW_COUNT'),
    minKey: r.bytes('_MIN_KEY'),
    maxKey: r.bytes('_MAX_KEY'),
    keyStats: r.stats('_KEY_STATS'),
    valueStats: r.stats('_VALUE_STATS'),
    minSequenceNumber: r.bigLong('_MIN_SEQUENCE_NUMBER'),
    maxSequenceNumber: r.bigLong('_MAX_SEQUENCE_NUMBER'),
    schemaId: r.long('_SCHEMA_ID'),
    level: r.int('_LEVEL'),
    extraFiles: r.stringArray('_EXTRA_FILES'),
    creationTime: r.optLong('_CREATION_TIME'),
    deleteRowCount: r.optLong('_DELETE_ROW_COUNT'),
    embeddedIndex: r.optBytes('_EMBEDDED_FILE_INDEX'),
    fileSource: r.optInt('_FILE_SOURCE'),
    valueStatsCols: r.optStringArray('_VALUE_STATS_COLS'),
    externalPath: r.optString('_EXTERNAL_PATH'),
    firstRowId: r.optLong('_FIRST_ROW_ID'),
    writeCols: r.optStringArray('_WRITE_COLS'),
    writeColsSequences: sequences === null ? null : sequences.map((s) => BigInt(s as number | bigint)),
  };
}

/**
 * Options of the data manifest readers. `copyBytes` (default true) copies byte fields (partition,
 * keys, stats, embedded index) into arrays of their own; `false` returns views into the decoded
 * Avro block, saving the copies for callers that drop most entries or copy what they keep (each
 * view keeps its whole block in memory). See {@link ManifestEntryDecodeOptions} for lazy stats and
 * the partition and bucket filters applied before an entry is decoded.
 */
export type ManifestDecodeOptions = ManifestEntryDecodeOptions;

/** Maps one decoded manifest record (any Paimon version's writer schema) to the model. */
export function manifestEntryFromAvro(record: AvroRecord, path: string, options: { readonly copyBytes?: boolean } = {}): ManifestEntry {
  const r = new FieldReader(path, record, '', options.copyBytes ?? true);
  checkVersion(r, MANIFEST_FORMAT_VERSION, 'data manifest');
  return {
    kind: kindFromInt(r.int('_KIND'), path),
    partition: r.bytes('_PARTITION'),
    bucket: r.int('_BUCKET'),
    totalBuckets: r.int('_TOTAL_BUCKETS'),
    file: dataFileMetaFromAvro(r.record('_FILE')),
  };
}

/** The model as a record of {@link MANIFEST_ENTRY_SCHEMA}. */
export function manifestEntryToAvro(entry: ManifestEntry): AvroRecord {
  const f = entry.file;
  if (f.writeColsSequences !== null && f.writeColsSequences !== undefined) {
    throw new FormatError(
      `cannot write _WRITE_COLS_SEQUENCES of data file '${f.fileName}': the manifest writer schema (Paimon 1.4) has no such field`,
    );
  }
  return {
    _VERSION: MANIFEST_FORMAT_VERSION,
    _KIND: kindToInt(entry.kind),
    _PARTITION: avroBytes(entry.partition),
    _BUCKET: entry.bucket,
    _TOTAL_BUCKETS: entry.totalBuckets,
    _FILE: {
      _FILE_NAME: f.fileName,
      _FILE_SIZE: f.fileSize,
      _ROW_COUNT: f.rowCount,
      _MIN_KEY: avroBytes(f.minKey),
      _MAX_KEY: avroBytes(f.maxKey),
      _KEY_STATS: statsToAvro(f.keyStats),
      _VALUE_STATS: statsToAvro(f.valueStats),
      _MIN_SEQUENCE_NUMBER: f.minSequenceNumber,
      _MAX_SEQUENCE_NUMBER: f.maxSequenceNumber,
      _SCHEMA_ID: f.schemaId,
      _LEVEL: f.level,
      _EXTRA_FILES: [...f.extraFiles],
      _CREATION_TIME: f.creationTime ?? null,
      _DELETE_ROW_COUNT: f.deleteRowCount ?? null,
      _EMBEDDED_FILE_INDEX: avroOptBytes(f.embeddedIndex),
      _FILE_SOURCE: f.fileSource ?? null,
      _VALUE_STATS_COLS: f.valueStatsCols === null || f.valueStatsCols === undefined ? null : [...f.valueStatsCols],
      _EXTERNAL_PATH: f.externalPath ?? null,
      _FIRST_ROW_ID: f.firstRowId ?? null,
      _WRITE_COLS: f.writeCols === null || f.writeCols === undefined ? null : [...f.writeCols],
    },
  };
}

/**
 * Streams the entries of a data manifest from its bytes (or a chunked download), decoding one
 * Avro block at a time straight from its bytes (avsc for writer schemas the direct decoder does not
 * know, and for chunked sources).
 */
export async function* decodeManifestEntries(
  source: Uint8Array | AsyncIterable<Uint8Array>,
  path: string,
  options: ManifestDecodeOptions = {},
): AsyncGenerator<ManifestEntry, void, undefined> {
  for await (const batch of decodeManifestEntryBatches(source, path, options)) yield* batch;
}

/**
 * Like {@link decodeManifestEntries}, one array of entries per Avro block: for callers that go
 * through many entries, where one await per entry would cost more than decoding it.
 */
export function decodeManifestEntryBatches(
  source: Uint8Array | AsyncIterable<Uint8Array>,
  path: string,
  options: ManifestDecodeOptions = {},
): AsyncGenerator<ManifestEntry[], void, undefined> {
  const copyBytes = options.copyBytes ?? true;
  return decodeManifestEntriesFast(source, path, options, (record, p) => manifestEntryFromAvro(record, p, { copyBytes }));
}

/**
 * The entries of a data manifest decoded record by record with avsc: the reference the direct
 * decoder is tested against. Filters and lazy stats do not apply.
 */
export async function* decodeManifestEntriesWithAvsc(
  source: Uint8Array | AsyncIterable<Uint8Array>,
  path: string,
  options: { readonly copyBytes?: boolean } = {},
): AsyncGenerator<ManifestEntry, void, undefined> {
  for await (const record of readManifestRecords(source, path)) yield manifestEntryFromAvro(record, path, options);
}

/** Streams the entries of the data manifest at `path` (full location). */
export async function* readManifestEntries(
  io: Pick<ManifestIO, 'read'>,
  path: string,
  options: ManifestDecodeOptions = {},
): AsyncGenerator<ManifestEntry, void, undefined> {
  yield* decodeManifestEntries(await io.read(path), path, options);
}

/** Encodes a data manifest with the Java 1.4 writer schema (codec `zstandard` unless given). */
export function writeManifestFile(
  entries: Iterable<ManifestEntry> | AsyncIterable<ManifestEntry>,
  options: AvroWriteOptions = {},
): Promise<Uint8Array> {
  return writeAvroFile(MANIFEST_ENTRY_SCHEMA, mapEntries(entries), options);
}

/** Encodes and writes a data manifest to `path`; returns the file size (for its ManifestFileMeta). */
export async function writeManifestFileTo(
  io: Pick<ManifestIO, 'write'>,
  path: string,
  entries: Iterable<ManifestEntry> | AsyncIterable<ManifestEntry>,
  options: AvroWriteOptions = {},
): Promise<number> {
  return writeEncodedTo(io, path, writeManifestFile(entries, options));
}

async function* mapEntries(entries: Iterable<ManifestEntry> | AsyncIterable<ManifestEntry>): AsyncGenerator<AvroRecord, void, undefined> {
  for await (const entry of entries) yield manifestEntryToAvro(entry);
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * Identity of a file entry for ADD/DELETE folding: partition bytes, bucket, level, file name,
 * extra files, embedded index and external path (the level is part of it: a level upgrade is a
 * DELETE at the old level plus an ADD at the new one). Equal identities give equal strings and
 * different identities different strings.
 *
 * Built for speed (it runs once per decoded entry): `hex|bucket|level|` followed by `N` + the file
 * name when the optional fields are all empty (the usual case), else by `J` + a JSON array of the
 * name and the optional fields. The marker character keeps both forms apart.
 */
export function fileEntryIdentity(entry: ManifestEntry): string {
  const f = entry.file;
  const head = `${hex(entry.partition)}|${entry.bucket}|${f.level}|`;
  if (f.extraFiles.length === 0 && (f.embeddedIndex ?? null) === null && (f.externalPath ?? null) === null) return `${head}N${f.fileName}`;
  return `${head}J${JSON.stringify([f.fileName, f.extraFiles, f.embeddedIndex ? hex(f.embeddedIndex) : null, f.externalPath ?? null])}`;
}
