/**
 * The shapes of a data manifest's records: {@link ManifestEntry} (ADD or DELETE of a data or
 * changelog file) and its {@link DataFileMeta}. Their Avro encoding is in `manifest-entry.ts`, the
 * fast decoder in `manifest-entry-decoder.ts`; both build on these, so neither imports the other.
 */
import { EMPTY_SIMPLE_STATS, type SimpleStats } from './manifest-fields.js';

/** Kind of a manifest entry; stored as `_KIND` 0 (ADD) / 1 (DELETE). */
export type FileKind = 'ADD' | 'DELETE';

/** `_FILE_SOURCE` values. */
export const FILE_SOURCE_APPEND = 0;
/** `_FILE_SOURCE` of a file written by compaction. */
export const FILE_SOURCE_COMPACT = 1;

/** Metadata of one data or changelog file (`_FILE`). */
export interface DataFileMeta {
  /** File name only; the directory follows from partition and bucket (or `externalPath`). */
  readonly fileName: string;
  readonly fileSize: number;
  /** All rows, including -U/-D rows. */
  readonly rowCount: number;
  /** Serialized BinaryRow of the smallest/largest key (empty row for append tables). */
  readonly minKey: Uint8Array;
  readonly maxKey: Uint8Array;
  readonly keyStats: SimpleStats;
  readonly valueStats: SimpleStats;
  readonly minSequenceNumber: bigint;
  readonly maxSequenceNumber: bigint;
  /** Schema the file was written with. */
  readonly schemaId: number;
  readonly level: number;
  /** Extra files next to the data file (e.g. a `.index` sidecar); usually empty. */
  readonly extraFiles: readonly string[];
  /**
   * `_CREATION_TIME` exactly as stored: Java writes the writer's local wall-clock time as if it
   * were UTC millis (see the format doc); null in files that omit it.
   */
  readonly creationTime: number | null;
  /** Number of -U/-D rows; null = unknown. */
  readonly deleteRowCount: number | null;
  /** Small file index embedded instead of a sidecar. */
  readonly embeddedIndex: Uint8Array | null;
  /** {@link FILE_SOURCE_APPEND} or {@link FILE_SOURCE_COMPACT}; null = unknown. */
  readonly fileSource: number | null;
  /** Columns covered by `valueStats`, or null when they cover all columns of the file's schema. */
  readonly valueStatsCols: readonly string[] | null;
  /** Absolute location when the file lives outside the table directory. */
  readonly externalPath: string | null;
  /** Row tracking: id of the file's first row (Paimon 1.3+). */
  readonly firstRowId: number | null;
  /** Data evolution: columns physically present in the file (Paimon 1.3+). */
  readonly writeCols: readonly string[] | null;
  /**
   * Per-column max sequence (Paimon master only). Read when present; the writer's 1.4 schema
   * has no such field, so writing a non-null value is rejected.
   */
  readonly writeColsSequences: readonly bigint[] | null;
}

/** The fields of a {@link DataFileMeta} that have no sensible default. */
export type DataFileMetaInit = Pick<DataFileMeta, 'fileName' | 'fileSize' | 'rowCount' | 'schemaId'> & Partial<DataFileMeta>;

/**
 * Builds a {@link DataFileMeta} from the fields that matter to the caller; the rest take the values
 * of a fresh level-0 append file: empty keys and key stats, empty value stats, sequence numbers 0,
 * no extra files, sidecars, external path or row tracking, and unknown creation time, delete count
 * and source.
 */
export function newDataFileMeta(init: DataFileMetaInit): DataFileMeta {
  return {
    minKey: EMPTY_SIMPLE_STATS.minValues,
    maxKey: EMPTY_SIMPLE_STATS.maxValues,
    keyStats: EMPTY_SIMPLE_STATS,
    valueStats: EMPTY_SIMPLE_STATS,
    minSequenceNumber: 0n,
    maxSequenceNumber: 0n,
    level: 0,
    extraFiles: [],
    creationTime: null,
    deleteRowCount: null,
    embeddedIndex: null,
    fileSource: null,
    valueStatsCols: null,
    externalPath: null,
    firstRowId: null,
    writeCols: null,
    writeColsSequences: null,
    ...init,
  };
}

/** One record of a data manifest. */
export interface ManifestEntry {
  readonly kind: FileKind;
  /** Serialized BinaryRow of the partition values (arity prefix included), as stored. */
  readonly partition: Uint8Array;
  readonly bucket: number;
  /** Bucket count of the table/partition when written; -1 for bucket-unaware or dynamic. */
  readonly totalBuckets: number;
  readonly file: DataFileMeta;
}
