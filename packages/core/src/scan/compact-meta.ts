/**
 * Compact in-memory copies of the manifest entries a plan keeps (one per live file, so their
 * footprint is the plan's memory). Planning decodes entries with their byte fields already in a
 * per-plan arena and uses this module only to share partition rows ({@link EntryCompactor.partitionAt})
 * and string lists; {@link EntryCompactor.entry} copies an entry whose byte fields are views into a
 * decoded Avro block into one buffer of its own, sharing values that repeat across files
 * (partition rows, the empty key rows of append tables, all-zero null counts). The result is a
 * complete {@link DataFileMeta}: nothing is dropped, so plans can still feed compaction
 * (`compactBefore`) and `tidemark files`.
 */
import type { DataFileMeta, ManifestEntry, SimpleStats } from '@tidemark/format';

/** Byte rows up to this size are shared by content (empty rows, small keys). */
const SHARE_MAX_BYTES = 24;
/** Recent small rows compared against (by content) before copying one more. */
const RECENT_ROWS = 8;
/** Partition rows {@link EntryCompactor.partitionAt} compares in place before looking one up by its hex. */
const RECENT_PARTITIONS = 8;
/** Distinct shared string lists kept per planner; beyond this, lists are copied. */
const SHARE_MAX_LISTS = 1024;

const NO_STRINGS: readonly string[] = Object.freeze([]);

/** Copies kept entries compactly; one instance per planning run (it holds the shared values). */
export class EntryCompactor {
  private readonly partitions = new Map<string, Uint8Array>();
  private lastPartition: Uint8Array | null = null;
  /** Shared rows of the partitions seen last (a ring), for {@link partitionAt}. */
  private readonly recentPartitions: Uint8Array[] = [];
  private nextRecentPartition = 0;

  /** A compact, self-contained copy of `entry` (no views into decoded manifest blocks). */
  entry(entry: ManifestEntry): ManifestEntry {
    return {
      kind: entry.kind,
      partition: this.partition(entry.partition),
      bucket: entry.bucket,
      totalBuckets: entry.totalBuckets,
      file: this.file(entry.file),
    };
  }

  /**
   * `entry` with its string lists shared with earlier files (for entries whose byte fields are
   * already compact, e.g. decoded into a {@link ByteArena}); the entry itself when it has none.
   */
  sharedLists(entry: ManifestEntry): ManifestEntry {
    const f = entry.file;
    if (f.valueStatsCols === null && f.writeCols === null && f.extraFiles.length === 0) return entry;
    const file: DataFileMeta = {
      ...f,
      extraFiles: f.extraFiles.length === 0 ? NO_STRINGS : [...f.extraFiles],
      valueStatsCols: f.valueStatsCols === null ? null : this.sharedStrings(f.valueStatsCols),
      writeCols: f.writeCols === null ? null : this.sharedStrings(f.writeCols),
    };
    return { ...entry, file };
  }

  /**
   * The shared partition row equal to `block[start, end)`. The rows of the last few partitions
   * are compared in place, without a view of the block or a hex key: entries of a manifest come
   * grouped by partition, or cycle through a few partitions.
   */
  partitionAt(block: Uint8Array, start: number, end: number): Uint8Array {
    const n = end - start;
    const last = this.lastPartition;
    if (last !== null && sameRowAt(last, block, start, n)) return last;
    const recent = this.recentPartitions;
    for (let r = 0; r < recent.length; r++) {
      const row = recent[r]!;
      if (row !== last && sameRowAt(row, block, start, n)) {
        this.lastPartition = row;
        return row;
      }
    }
    const row = this.partition(block.subarray(start, end));
    recent[this.nextRecentPartition] = row;
    this.nextRecentPartition = (this.nextRecentPartition + 1) % RECENT_PARTITIONS;
    return row;
  }

  /** The partition row shared by every entry of that partition. */
  partition(bytes: Uint8Array): Uint8Array {
    const last = this.lastPartition;
    if (last !== null && equalBytes(last, bytes)) return last;
    const key = hex(bytes);
    let p = this.partitions.get(key);
    if (p === undefined) {
      p = new Uint8Array(bytes);
      this.partitions.set(key, p);
    }
    this.lastPartition = p;
    return p;
  }

  private file(f: DataFileMeta): DataFileMeta {
    // Rows that are not shared go into one buffer for the whole file.
    const parts = [f.minKey, f.maxKey, f.keyStats.minValues, f.keyStats.maxValues, f.valueStats.minValues, f.valueStats.maxValues];
    if (f.embeddedIndex !== null) parts.push(f.embeddedIndex);
    const sharedParts = parts.map((b) => this.sharedBytes(b));
    let total = 0;
    parts.forEach((b, i) => {
      if (sharedParts[i] === undefined) total += b.length;
    });
    const buffer = total === 0 ? null : new Uint8Array(total);
    let offset = 0;
    const out = parts.map((b, i) => {
      const s = sharedParts[i];
      if (s !== undefined) return s;
      const view = buffer!.subarray(offset, offset + b.length);
      view.set(b);
      offset += b.length;
      this.remember(view);
      return view;
    });
    return {
      fileName: f.fileName,
      fileSize: f.fileSize,
      rowCount: f.rowCount,
      minKey: out[0]!,
      maxKey: out[1]!,
      keyStats: this.stats(out[2]!, out[3]!, f.keyStats.nullCounts),
      valueStats: this.stats(out[4]!, out[5]!, f.valueStats.nullCounts),
      minSequenceNumber: f.minSequenceNumber,
      maxSequenceNumber: f.maxSequenceNumber,
      schemaId: f.schemaId,
      level: f.level,
      extraFiles: f.extraFiles.length === 0 ? NO_STRINGS : [...f.extraFiles],
      creationTime: f.creationTime,
      deleteRowCount: f.deleteRowCount,
      embeddedIndex: f.embeddedIndex === null ? null : out[6]!,
      fileSource: f.fileSource,
      valueStatsCols: f.valueStatsCols === null ? null : this.sharedStrings(f.valueStatsCols),
      externalPath: f.externalPath,
      firstRowId: f.firstRowId,
      writeCols: f.writeCols === null ? null : this.sharedStrings(f.writeCols),
      writeColsSequences: f.writeColsSequences,
    };
  }

  private stats(minValues: Uint8Array, maxValues: Uint8Array, nullCounts: SimpleStats['nullCounts']): SimpleStats {
    return { minValues, maxValues, nullCounts: nullCounts === null ? null : this.sharedCounts(nullCounts) };
  }

  private readonly recentRows: Uint8Array[] = [];
  private nextRecent = 0;

  /** A shared copy of a small row (most files repeat the same few: empty rows, equal keys). */
  private sharedBytes(bytes: Uint8Array): Uint8Array | undefined {
    if (bytes.length > SHARE_MAX_BYTES) return undefined;
    for (const r of this.recentRows) if (equalBytes(r, bytes)) return r;
    return undefined;
  }

  /** Offers a small row copied into a file's buffer for sharing with the next files. */
  private remember(row: Uint8Array): void {
    if (row.length > SHARE_MAX_BYTES) return;
    this.recentRows[this.nextRecent] = row;
    this.nextRecent = (this.nextRecent + 1) % RECENT_ROWS;
  }

  private readonly recentCounts: (readonly (number | null)[])[] = [];
  private nextCounts = 0;

  /** Null counts, shared with a recent file's when equal (typically all zero). */
  private sharedCounts(counts: readonly (number | null)[]): readonly (number | null)[] {
    for (const r of this.recentCounts) if (r.length === counts.length && r.every((c, i) => c === counts[i])) return r;
    const copy = Object.freeze([...counts]);
    this.recentCounts[this.nextCounts] = copy;
    this.nextCounts = (this.nextCounts + 1) % RECENT_ROWS;
    return copy;
  }

  private readonly lists = new Map<string, readonly string[]>();

  private sharedStrings(values: readonly string[]): readonly string[] {
    const key = JSON.stringify(values);
    let v = this.lists.get(key);
    if (v === undefined) {
      v = Object.freeze([...values]);
      if (this.lists.size < SHARE_MAX_LISTS) this.lists.set(key, v);
    }
    return v;
  }
}

/**
 * Whether `row` equals `block[start, start + n)`; compared from the end, where partition values
 * differ (the row header rarely does).
 */
function sameRowAt(row: Uint8Array, block: Uint8Array, start: number, n: number): boolean {
  if (row.length !== n) return false;
  for (let i = n - 1; i >= 0; i--) if (row[i] !== block[start + i]) return false;
  return true;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
