/**
 * Manifest lists (`manifest/manifest-list-*`): one {@link ManifestFileMeta} per manifest file of a
 * snapshot's base, delta or changelog list.
 */
import { writeAvroFile, type AvroRecord, type AvroWriteOptions } from './avro-container.js';
import {
  FieldReader,
  checkVersion,
  decodeAllRecords,
  statsToAvro,
  writeEncodedTo,
  type ManifestIO,
  type SimpleStats,
} from './manifest-fields.js';
import { MANIFEST_FILE_META_SCHEMA, MANIFEST_FORMAT_VERSION } from './manifest-schemas.js';

/** One record of a manifest list: a manifest file and a summary of its entries. */
export interface ManifestFileMeta {
  /** Manifest file name, relative to the table's `manifest/` directory. */
  readonly fileName: string;
  readonly fileSize: number;
  readonly numAddedFiles: number;
  readonly numDeletedFiles: number;
  /** Stats over the `_PARTITION` rows of all entries (full, untruncated). */
  readonly partitionStats: SimpleStats;
  /** Max `_SCHEMA_ID` of the entries' files. */
  readonly schemaId: number;
  /** Min/max bucket and level of the entries; null in files written before Paimon 1.1. */
  readonly minBucket: number | null;
  readonly maxBucket: number | null;
  readonly minLevel: number | null;
  readonly maxLevel: number | null;
  /** Row-tracking range; null unless every entry has a first row id (Paimon 1.4+). */
  readonly minRowId: number | null;
  readonly maxRowId: number | null;
}

/** Maps one decoded manifest-list record (any Paimon version's writer schema) to the model. */
export function manifestFileMetaFromAvro(record: AvroRecord, path: string): ManifestFileMeta {
  const r = new FieldReader(path, record);
  checkVersion(r, MANIFEST_FORMAT_VERSION, 'manifest list');
  return {
    fileName: r.string('_FILE_NAME'),
    fileSize: r.long('_FILE_SIZE'),
    numAddedFiles: r.long('_NUM_ADDED_FILES'),
    numDeletedFiles: r.long('_NUM_DELETED_FILES'),
    partitionStats: r.stats('_PARTITION_STATS'),
    schemaId: r.long('_SCHEMA_ID'),
    minBucket: r.optInt('_MIN_BUCKET'),
    maxBucket: r.optInt('_MAX_BUCKET'),
    minLevel: r.optInt('_MIN_LEVEL'),
    maxLevel: r.optInt('_MAX_LEVEL'),
    minRowId: r.optLong('_MIN_ROW_ID'),
    maxRowId: r.optLong('_MAX_ROW_ID'),
  };
}

/** The model as a record of {@link MANIFEST_FILE_META_SCHEMA}. */
export function manifestFileMetaToAvro(meta: ManifestFileMeta): AvroRecord {
  return {
    _VERSION: MANIFEST_FORMAT_VERSION,
    _FILE_NAME: meta.fileName,
    _FILE_SIZE: meta.fileSize,
    _NUM_ADDED_FILES: meta.numAddedFiles,
    _NUM_DELETED_FILES: meta.numDeletedFiles,
    _PARTITION_STATS: statsToAvro(meta.partitionStats),
    _SCHEMA_ID: meta.schemaId,
    _MIN_BUCKET: meta.minBucket ?? null,
    _MAX_BUCKET: meta.maxBucket ?? null,
    _MIN_LEVEL: meta.minLevel ?? null,
    _MAX_LEVEL: meta.maxLevel ?? null,
    _MIN_ROW_ID: meta.minRowId ?? null,
    _MAX_ROW_ID: meta.maxRowId ?? null,
  };
}

/**
 * Decodes a manifest list from its bytes. Lists are small (one record per manifest), so the
 * result is an array.
 */
export async function decodeManifestList(source: Uint8Array | AsyncIterable<Uint8Array>, path: string): Promise<ManifestFileMeta[]> {
  return decodeAllRecords(source, path, manifestFileMetaFromAvro);
}

/** Reads the manifest list at `path` (full location). */
export async function readManifestList(io: Pick<ManifestIO, 'read'>, path: string): Promise<ManifestFileMeta[]> {
  return decodeManifestList(await io.read(path), path);
}

/** Encodes a manifest list with the Java 1.4 writer schema (codec `zstandard` unless given). */
export function writeManifestList(metas: Iterable<ManifestFileMeta>, options: AvroWriteOptions = {}): Promise<Uint8Array> {
  return writeAvroFile(MANIFEST_FILE_META_SCHEMA, mapIterable(metas, manifestFileMetaToAvro), options);
}

/** Encodes and writes a manifest list to `path`; returns the file size. */
export async function writeManifestListTo(
  io: Pick<ManifestIO, 'write'>,
  path: string,
  metas: Iterable<ManifestFileMeta>,
  options: AvroWriteOptions = {},
): Promise<number> {
  return writeEncodedTo(io, path, writeManifestList(metas, options));
}

function* mapIterable<T, U>(items: Iterable<T>, fn: (item: T) => U): Iterable<U> {
  for (const item of items) yield fn(item);
}
