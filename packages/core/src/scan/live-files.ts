/**
 * The live files of one (partition, bucket) while planning folds ADD/DELETE entries: each ADD
 * becomes its planned file at once and the entry itself is dropped, so a plan keeps no entry
 * object per live file and needs no grouping pass after the fold.
 *
 * Within one (partition, bucket) a file's identity is its level, file name, extra files, embedded
 * index and external path. A map keyed by an identity string costs a new string per file, and
 * string keys make every operation of a large map slow; here the usual file (no extra files,
 * index or external path) is found in an open-addressing table of two typed arrays (hash of its
 * name, slot), and the name and level are compared when the hashes are equal: no object per file
 * and no map operation. Files with other identity parts go to a map keyed by their identity string.
 */
import type { DataFileMeta } from '@tidemark/format';
import { BucketFile, type PlannedFile } from './data-split.js';

/** Cells of a new table (a power of two). */
const MIN_CELLS = 16;
const EMPTY = 0;
const DELETED = -1;

function isSimple(f: DataFileMeta): boolean {
  return f.extraFiles.length === 0 && f.embeddedIndex === null && f.externalPath === null;
}

/** FNV-1a over the UTF-16 code units of `s`, cut to 30 bits so it stays a small integer. */
export function nameHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h & 0x3fffffff;
}

/** Identity of a file with extra files, an embedded index or an external path, within its bucket. */
function fullIdentity(f: DataFileMeta): string {
  const index = f.embeddedIndex === null ? null : Buffer.from(f.embeddedIndex).toString('hex');
  return `${f.level}|${JSON.stringify([f.fileName, f.extraFiles, index, f.externalPath])}`;
}

/** Order of files in a split: level, then min sequence number, then name. */
export function compareFiles(a: DataFileMeta, b: DataFileMeta): number {
  return (
    a.level - b.level ||
    (a.minSequenceNumber < b.minSequenceNumber ? -1 : a.minSequenceNumber > b.minSequenceNumber ? 1 : 0) ||
    (a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0)
  );
}

/** Live files of one (partition, bucket), in the order they were added. */
export class BucketFiles {
  /** Planned files in ADD order; null where a file was deleted since. */
  private readonly slots: (PlannedFile | null)[] = [];
  /** `_TOTAL_BUCKETS` of each slot's entry, only once entries disagree (rescaled buckets). */
  private totals: number[] | null = null;
  private readonly firstTotal: number;
  /** Open addressing (linear probing) over usual files: the name hash of each cell, and its slot. */
  private hashes = new Int32Array(MIN_CELLS);
  /** Slot + 1 of each cell; {@link EMPTY} or {@link DELETED} when it holds none. */
  private cells = new Int32Array(MIN_CELLS);
  /** Cells not {@link EMPTY} (deleted ones included: they lengthen probes until a rebuild). */
  private usedCells = 0;
  private readonly byIdentity = new Map<string, number>();
  private live = 0;

  /**
   * @param bucketPath full location of the bucket directory (the planned files' locations derive from it)
   * @param totalBuckets `_TOTAL_BUCKETS` of the entry that opened the bucket
   * @param hash hash of a file name (a parameter so tests can force collisions)
   */
  constructor(
    readonly bucketPath: string,
    totalBuckets: number,
    private readonly hash: (name: string) => number = nameHash,
  ) {
    this.firstTotal = totalBuckets;
  }

  /** Number of live files. */
  get size(): number {
    return this.live;
  }

  /** Whether a file with `f`'s identity is live. */
  has(f: DataFileMeta): boolean {
    return this.find(f) >= 0;
  }

  /** Adds `f` unless a file with its identity is live; returns false then (nothing changes). */
  add(f: DataFileMeta, totalBuckets: number = this.firstTotal): boolean {
    const slot = this.slots.length;
    if (!isSimple(f)) {
      const id = fullIdentity(f);
      if (this.byIdentity.has(id)) return false;
      this.byIdentity.set(id, slot);
    } else {
      const h = this.hash(f.fileName);
      let cell = this.probe(h, f);
      if (cell >= 0) return false;
      cell = ~cell;
      if (this.cells[cell] === EMPTY) this.usedCells++;
      this.hashes[cell] = h;
      this.cells[cell] = slot + 1;
      // At most half full, deleted cells included, so probes stay short and always end.
      if (this.usedCells * 2 > this.cells.length) this.rebuild();
    }
    this.push(f, totalBuckets);
    return true;
  }

  /**
   * Adds `f` without looking for its identity (incremental plans list what each snapshot added;
   * they do not fold). A file added this way cannot be deleted.
   */
  append(f: DataFileMeta, totalBuckets: number = this.firstTotal): void {
    this.push(f, totalBuckets);
  }

  private push(f: DataFileMeta, totalBuckets: number): void {
    const slot = this.slots.length;
    this.slots.push(new BucketFile(f, this.bucketPath));
    if (totalBuckets !== this.firstTotal && this.totals === null) this.totals = this.slots.map(() => this.firstTotal);
    if (this.totals !== null) this.totals[slot] = totalBuckets;
    this.live++;
  }

  /** Removes the live file with `f`'s identity; false when there is none. */
  delete(f: DataFileMeta): boolean {
    let slot: number;
    if (!isSimple(f)) {
      const id = fullIdentity(f);
      const s = this.byIdentity.get(id);
      if (s === undefined) return false;
      this.byIdentity.delete(id);
      slot = s;
    } else {
      const cell = this.probe(this.hash(f.fileName), f);
      if (cell < 0) return false;
      slot = this.cells[cell]! - 1;
      this.cells[cell] = DELETED;
    }
    this.slots[slot] = null;
    this.live--;
    return true;
  }

  /** `_TOTAL_BUCKETS` of the first live file's entry (of the opening entry when none is live). */
  get totalBuckets(): number {
    if (this.totals === null) return this.firstTotal;
    for (let i = 0; i < this.slots.length; i++) if (this.slots[i] !== null) return this.totals[i]!;
    return this.firstTotal;
  }

  /** Any one live file, or undefined when none is. */
  first(): PlannedFile | undefined {
    for (const s of this.slots) if (s !== null) return s;
    return undefined;
  }

  /** The live files ordered by level, min sequence number and name (see {@link compareFiles}). */
  files(): PlannedFile[] {
    const files = this.live === this.slots.length ? this.slots.slice() : this.slots.filter((s) => s !== null);
    // Manifests usually list a bucket's files in this order already: checking is linear.
    const out = files as PlannedFile[];
    for (let i = 1; i < out.length; i++) {
      if (compareFiles(out[i - 1]!.meta, out[i]!.meta) > 0) return out.sort((a, b) => compareFiles(a.meta, b.meta));
    }
    return out;
  }

  private find(f: DataFileMeta): number {
    if (!isSimple(f)) return this.byIdentity.size === 0 ? -1 : (this.byIdentity.get(fullIdentity(f)) ?? -1);
    const cell = this.probe(this.hash(f.fileName), f);
    return cell < 0 ? -1 : this.cells[cell]! - 1;
  }

  /**
   * The cell of the usual file with `f`'s identity (name hash `h`), or, when there is none, `~cell`
   * of the cell to put it in (the first deleted cell on the probe, else the empty one ending it).
   */
  private probe(h: number, f: DataFileMeta): number {
    const cells = this.cells;
    const hashes = this.hashes;
    const mask = cells.length - 1;
    let free = -1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const c = cells[i]!;
      if (c === EMPTY) return ~(free < 0 ? i : free);
      if (c === DELETED) {
        if (free < 0) free = i;
      } else if (hashes[i] === h && this.same(c - 1, f)) return i;
    }
  }

  /** Rehashes the live cells into a table sized for them (drops deleted cells). */
  private rebuild(): void {
    const oldCells = this.cells;
    const oldHashes = this.hashes;
    let live = 0;
    for (let i = 0; i < oldCells.length; i++) if (oldCells[i]! > 0) live++;
    let size = MIN_CELLS;
    while (size < live * 4) size *= 2;
    const cells = new Int32Array(size);
    const hashes = new Int32Array(size);
    const mask = size - 1;
    for (let i = 0; i < oldCells.length; i++) {
      const c = oldCells[i]!;
      if (c <= 0) continue;
      let j = oldHashes[i]! & mask;
      while (cells[j] !== EMPTY) j = (j + 1) & mask;
      cells[j] = c;
      hashes[j] = oldHashes[i]!;
    }
    this.cells = cells;
    this.hashes = hashes;
    this.usedCells = live;
  }

  /** Whether the usual file in `slot` has `f`'s identity (name and level; the bucket is this one). */
  private same(slot: number, f: DataFileMeta): boolean {
    const m = this.slots[slot]!.meta;
    return m.fileName === f.fileName && m.level === f.level;
  }
}
