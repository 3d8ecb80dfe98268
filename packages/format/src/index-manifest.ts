/**
 * Index manifests (`manifest/index-manifest-*`): the complete list of live index files of a
 * snapshot (deletion vectors, dynamic-bucket hash indexes, global indexes).
 */
import { writeAvroFile, type AvroRecord, type AvroWriteOptions } from './avro-container.js';
import { FormatError } from './errors.js';
import type { FileKind } from './manifest-entry.js';
import {
  FieldReader,
  avroBytes,
  avroOptBytes,
  checkVersion,
  decodeAllRecords,
  writeEncodedTo,
  type ManifestIO,
} from './manifest-fields.js';
import { INDEX_MANIFEST_ENTRY_SCHEMA, INDEX_MANIFEST_FORMAT_VERSION } from './manifest-schemas.js';

/** `_INDEX_TYPE` of deletion-vector index files. */
export const INDEX_TYPE_DELETION_VECTORS = 'DELETION_VECTORS';
/** `_INDEX_TYPE` of dynamic-bucket hash index files. */
export const INDEX_TYPE_HASH = 'HASH';

/** Where one data file's deletion vector lives inside a DV index file. */
export interface DeletionVectorRange {
  /** Name of the data file the vector belongs to (`f0`). */
  readonly dataFileName: string;
  /** Offset of the vector's 4-byte size field in the index file (`f1`). */
  readonly offset: number;
  /** Size of the serialized vector, magic included, without the size and CRC fields (`f2`). */
  readonly length: number;
  /** Number of deleted rows; null in files that do not record it. */
  readonly cardinality: number | null;
}

/** `_GLOBAL_INDEX` of global index files (Paimon 1.4+). */
export interface GlobalIndexMeta {
  readonly rowRangeStart: number;
  readonly rowRangeEnd: number;
  readonly indexFieldId: number;
  readonly extraFieldIds: readonly number[] | null;
  readonly indexMeta: Uint8Array | null;
  readonly sourceMeta: Uint8Array | null;
}

/** One record of an index manifest. */
export interface IndexManifestEntry {
  readonly kind: FileKind;
  /** Serialized BinaryRow of the partition values, as stored. */
  readonly partition: Uint8Array;
  readonly bucket: number;
  /** `DELETION_VECTORS`, `HASH`, or a global index type. */
  readonly indexType: string;
  /** File name under the table's `index/` directory. */
  readonly fileName: string;
  readonly fileSize: number;
  readonly rowCount: number;
  /** Deletion-vector ranges in file order; null for non-DV index files. */
  readonly dvRanges: readonly DeletionVectorRange[] | null;
  readonly externalPath: string | null;
  readonly globalIndex: GlobalIndexMeta | null;
}

/** Maps one decoded index-manifest record (any Paimon version's writer schema) to the model. */
export function indexManifestEntryFromAvro(record: AvroRecord, path: string): IndexManifestEntry {
  const r = new FieldReader(path, record);
  checkVersion(r, INDEX_MANIFEST_FORMAT_VERSION, 'index manifest');
  const kind = r.int('_KIND');
  if (kind !== 0 && kind !== 1) {
    throw new FormatError(`${path}: unknown index manifest entry _KIND ${kind} (expected 0 = ADD or 1 = DELETE)`);
  }
  const ranges = r.optArray('_DELETIONS_VECTORS_RANGES');
  const global = r.optRecord('_GLOBAL_INDEX');
  const extraIds = global?.optArray('_EXTRA_FIELD_IDS') ?? null;
  return {
    kind: kind === 0 ? 'ADD' : 'DELETE',
    partition: r.bytes('_PARTITION'),
    bucket: r.int('_BUCKET'),
    indexType: r.string('_INDEX_TYPE'),
    fileName: r.string('_FILE_NAME'),
    fileSize: r.long('_FILE_SIZE'),
    rowCount: r.long('_ROW_COUNT'),
    // Items are a nullable union in the schema, but Java never writes null items (its reader
    // would fail on them); skip them rather than fail.
    dvRanges:
      ranges === null
        ? null
        : ranges
            .filter((item) => item !== null)
            .map((item, i) => {
              const d = new FieldReader(path, item as AvroRecord, `_DELETIONS_VECTORS_RANGES[${i}].`);
              return {
                dataFileName: d.string('f0'),
                offset: d.int('f1'),
                length: d.int('f2'),
                cardinality: d.optLong('_CARDINALITY'),
              };
            }),
    externalPath: r.optString('_EXTERNAL_PATH'),
    globalIndex:
      global === null
        ? null
        : {
            rowRangeStart: global.long('_ROW_RANGE_START'),
            rowRangeEnd: global.long('_ROW_RANGE_END'),
            indexFieldId: global.int('_INDEX_FIELD_ID'),
            extraFieldIds: extraIds === null ? null : extraIds.map((x) => Number(x)),
            indexMeta: global.optBytes('_INDEX_META'),
            sourceMeta: global.optBytes('_SOURCE_META'),
          },
  };
}

/** The model as a record of {@link INDEX_MANIFEST_ENTRY_SCHEMA}. */
export function indexManifestEntryToAvro(entry: IndexManifestEntry): AvroRecord {
  const g = entry.globalIndex;
  return {
    _VERSION: INDEX_MANIFEST_FORMAT_VERSION,
    _KIND: entry.kind === 'ADD' ? 0 : 1,
    _PARTITION: avroBytes(entry.partition),
    _BUCKET: entry.bucket,
    _INDEX_TYPE: entry.indexType,
    _FILE_NAME: entry.fileName,
    _FILE_SIZE: entry.fileSize,
    _ROW_COUNT: entry.rowCount,
    _DELETIONS_VECTORS_RANGES:
      entry.dvRanges === null || entry.dvRanges === undefined
        ? null
        : entry.dvRanges.map((d) => ({
            f0: d.dataFileName,
            f1: d.offset,
            f2: d.length,
            _CARDINALITY: d.cardinality ?? null,
          })),
    _EXTERNAL_PATH: entry.externalPath ?? null,
    _GLOBAL_INDEX:
      g === null || g === undefined
        ? null
        : {
            _ROW_RANGE_START: g.rowRangeStart,
            _ROW_RANGE_END: g.rowRangeEnd,
            _INDEX_FIELD_ID: g.indexFieldId,
            _EXTRA_FIELD_IDS: g.extraFieldIds === null ? null : [...g.extraFieldIds],
            _INDEX_META: avroOptBytes(g.indexMeta),
            _SOURCE_META: avroOptBytes(g.sourceMeta),
          },
  };
}

/** Decodes an index manifest from its bytes. */
export async function decodeIndexManifest(source: Uint8Array | AsyncIterable<Uint8Array>, path: string): Promise<IndexManifestEntry[]> {
  return decodeAllRecords(source, path, indexManifestEntryFromAvro);
}

/** Reads the index manifest at `path` (full location). */
export async function readIndexManifest(io: Pick<ManifestIO, 'read'>, path: string): Promise<IndexManifestEntry[]> {
  return decodeIndexManifest(await io.read(path), path);
}

/** Encodes an index manifest with the Java 1.4 writer schema (codec `zstandard` unless given). */
export function writeIndexManifest(entries: Iterable<IndexManifestEntry>, options: AvroWriteOptions = {}): Promise<Uint8Array> {
  const records: AvroRecord[] = [];
  for (const entry of entries) records.push(indexManifestEntryToAvro(entry));
  return writeAvroFile(INDEX_MANIFEST_ENTRY_SCHEMA, records, options);
}

/** Encodes and writes an index manifest to `path`; returns the file size. */
export async function writeIndexManifestTo(
  io: Pick<ManifestIO, 'write'>,
  path: string,
  entries: Iterable<IndexManifestEntry>,
  options: AvroWriteOptions = {},
): Promise<number> {
  return writeEncodedTo(io, path, writeIndexManifest(entries, options));
}
