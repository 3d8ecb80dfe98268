/**
 * The live files of a plan as columns, not objects: while planning folds ADD/DELETE entries, each
 * added file becomes a row of typed arrays (its group = partition and bucket, level, first
 * sequence number, rows, total buckets, where its bytes are) and the raw Avro bytes of its `_FILE`
 * record stay where they are, in the decompressed manifest block, which the plan keeps (a block
 * mostly of files that are filtered out or deleted has its live records copied into a chunked
 * arena instead, so a plan holds about its live records' bytes). Nothing is decoded into a {@link DataFileMeta} until
 * a caller asks for a file ({@link PlanFiles.meta}), so a plan of a million files holds a few
 * typed arrays and the record bytes instead of a million small object graphs that the collector
 * copies and marks while the plan grows.
 *
 * ADD/DELETE folding finds a file by its identity within its group (docs/format.md, "Scan
 * planning"): level, file name, extra files, embedded index and external path. The usual file (no
 * extra files, index or external path) is found in an open-addressing table of two typed arrays
 * (hash of its group, level and name bytes; row), comparing the name bytes in place: no string and
 * no map operation per file. Other files are kept in a map by their identity string.
 */
import type { DataFileMeta, ManifestEntryWalker } from '@tidemark/format';

/** Bytes per arena chunk; a record larger than this gets a chunk of its own. */
const CHUNK_BYTES = 1 << 20;
/**
 * A block whose live records take less than this share of it has them copied into the arena once
 * it is folded; kept blocks (and records deleted later) may hold at most 1 ÷ this times the live
 * bytes until {@link PlanFiles.finish} copies the live records of the others.
 */
const KEEP_BLOCK_SHARE = 0.5;
const MIN_ROWS = 64;
const MIN_CELLS = 64;
const EMPTY = 0;
const DELETED = -1;
/** Rows whose meta is an object (decoded by the record path: ORC manifests, schemas the walker cannot follow). */
const NO_WALKER = 0;

const utf8 = new TextEncoder();
const EMPTY_CHUNK = Buffer.alloc(0);

/** FNV-1a over `bytes[start, end)`, mixed with a group and level, cut to 30 bits. */
export function identityHash(bytes: Uint8Array, start: number, end: number, group: number, level: number): number {
  let h = 0x811c9dc5 ^ Math.imul(group + 1, 0x9e3779b1) ^ Math.imul(level + 7, 0x85ebca6b);
  for (let i = start; i < end; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 16777619);
  }
  return h & 0x3fffffff;
}

/** Identity string of a file that has extra files, an embedded index or an external path. */
export function fullFileIdentity(f: DataFileMeta): string {
  const index = f.embeddedIndex === null ? null : Buffer.from(f.embeddedIndex).toString('hex');
  return `${f.level}|${JSON.stringify([f.fileName, f.extraFiles, index, f.externalPath])}`;
}

/** Whether a file's identity is its level and name alone. */
export function hasPlainIdentity(f: DataFileMeta): boolean {
  return f.extraFiles.length === 0 && f.embeddedIndex === null && f.externalPath === null;
}

/** The rows of every group, ordered by group (a counting sort of the live rows, each group in ADD order). */
export interface GroupedRows {
  /** Live rows, group after group. */
  readonly rows: Int32Array;
  /** Rows of group `g` are `rows[starts[g], starts[g + 1])`. */
  readonly starts: Int32Array;
}

/** Columns and record bytes of the files added while folding one plan. */
export class PlanFiles {
  /** Kept manifest blocks and arena chunks: the buffers rows' records are in. */
  private readonly chunks: Buffer[] = [];
  /** The arena chunk being filled. */
  private chunk: Buffer | null = null;
  /** Index of {@link chunk} in {@link chunks} (kept blocks may come after it). */
  private chunkIndex = -1;
  private chunkPos = 0;
  /** Index in {@link chunks} of the block being folded, -1 before its first kept record. */
  private blockChunk = -1;
  private block: Buffer | null = null;
  /** First row added from the block being folded. */
  private blockFirstRow = 0;
  /** Bytes of the buffers in {@link chunks}. */
  private heldBytes = 0;

  private capacity = 0;
  /** Rows appended (live and deleted). */
  private rowCount = 0;
  private live = 0;
  /** Record bytes of the live rows. */
  private liveBytes = 0;

  /** Arena chunk and offset of each row's `_FILE` record (or name, for object rows); small integers, so indexing stays fast. */
  private recChunk = new Uint32Array(0);
  private recOff = new Uint32Array(0);
  private recLen = new Uint32Array(0);
  /** Offset of the name's UTF-8 bytes in the record, and their length. */
  private nameOff = new Uint32Array(0);
  private nameLen = new Uint32Array(0);
  private groups = new Int32Array(0);
  private levels = new Int32Array(0);
  private totals = new Int32Array(0);
  /** `_MIN_SEQUENCE_NUMBER` when it is a safe integer, else NaN (then the file is decoded to compare). */
  private minSeqs = new Float64Array(0);
  private rows = new Float64Array(0);
  /** Index + 1 into {@link walkers} of the schema that decodes the row's record, {@link NO_WALKER} for object rows. */
  private walkerOf = new Uint16Array(0);
  /** 1 while the row's file is live. */
  private alive = new Uint8Array(0);

  private readonly walkers: ManifestEntryWalker[] = [];
  private readonly objects = new Map<number, DataFileMeta>();

  /** Open addressing (linear probing) over rows of plain identity: identity hash of each cell, and row + 1. */
  private hashes: Int32Array;
  private cells: Int32Array;
  /** Cells not {@link EMPTY} (deleted ones included: they lengthen probes until a rebuild). */
  private usedCells = 0;
  /** Rows of other identities, by `group|identity`. */
  private readonly byIdentity = new Map<string, number>();

  /**
   * @param expectedFiles files the plan will add at most, as the manifest lists count them: the
   *   columns and the identity table are made that large at once, instead of growing (copying)
   *   as files come (more files still fit, by growing)
   * @param hash identity hash (a parameter so tests can force collisions)
   */
  constructor(
    expectedFiles = 0,
    private readonly hash: typeof identityHash = identityHash,
  ) {
    if (expectedFiles > 0) this.grow(expectedFiles);
    let cells = MIN_CELLS;
    // At most half full with every expected file added (deleted cells stay used until a rebuild).
    while (cells < expectedFiles * 2 + 2) cells *= 2;
    this.hashes = new Int32Array(cells);
    this.cells = new Int32Array(cells);
  }

  /** Number of live files. */
  get size(): number {
    return this.live;
  }

  /** Bytes of the kept blocks and arena chunks the records are in (what the plan holds besides its columns). */
  get bytesHeld(): number {
    return this.heldBytes;
  }

  /**
   * Adds the file of the entry `walker` just walked in `block`, in `group`, unless a file with its
   * identity is live there; returns false then (nothing changes). `identity` is
   * {@link fullFileIdentity} of the file when it does not have a plain identity, else null.
   * Without `fold` (incremental plans) the file is appended without looking for its identity, and
   * cannot be deleted.
   */
  addWalked(walker: ManifestEntryWalker, block: Buffer, group: number, identity: string | null, fold = true): boolean {
    const level = walker.level;
    const nameStart = walker.nameStart;
    const nameEnd = walker.nameEnd;
    let cell = 0;
    let h = 0;
    if (!fold) {
      // appended as is
    } else if (identity === null) {
      h = this.hash(block, nameStart, nameEnd, group, level);
      cell = this.probe(h, block, nameStart, nameEnd, group, level);
      if (cell >= 0) return false;
    } else if (this.byIdentity.has(`${group}|${identity}`)) return false;
    const fileStart = walker.fileStart;
    const len = walker.fileEnd - fileStart;
    // The record stays in the block: the block is kept (see endBlock).
    if (block !== this.block) this.startBlock(block);
    if (this.blockChunk < 0) this.keepBlock(block);
    const row = this.addRow(len);
    this.recChunk[row] = this.blockChunk;
    this.recOff[row] = fileStart;
    this.nameOff[row] = nameStart - fileStart;
    this.nameLen[row] = nameEnd - nameStart;
    this.groups[row] = group;
    this.levels[row] = level;
    this.totals[row] = walker.totalBuckets;
    this.minSeqs[row] = walker.minSequenceNumber;
    this.rows[row] = walker.rowCount;
    this.walkerOf[row] = this.walkerId(walker);
    if (!fold) return true;
    if (identity === null) this.insert(~cell, h, row);
    else this.byIdentity.set(`${group}|${identity}`, row);
    return true;
  }

  /** Removes the live file with the identity of the entry `walker` just walked; false when there is none. */
  deleteWalked(walker: ManifestEntryWalker, block: Buffer, group: number, identity: string | null): boolean {
    if (identity !== null) return this.deleteByIdentity(group, identity);
    const level = walker.level;
    const h = this.hash(block, walker.nameStart, walker.nameEnd, group, level);
    const cell = this.probe(h, block, walker.nameStart, walker.nameEnd, group, level);
    if (cell < 0) return false;
    this.kill(this.cells[cell]! - 1);
    this.cells[cell] = DELETED;
    return true;
  }

  /** {@link addWalked} for a decoded file (kept as the object). */
  addObject(file: DataFileMeta, group: number, totalBuckets: number): boolean {
    const name = utf8.encode(file.fileName);
    let cell = 0;
    let h = 0;
    const plain = hasPlainIdentity(file);
    const identity = plain ? null : fullFileIdentity(file);
    if (plain) {
      h = this.hash(name, 0, name.length, group, file.level);
      cell = this.probe(h, name, 0, name.length, group, file.level);
      if (cell >= 0) return false;
    } else if (this.byIdentity.has(`${group}|${identity!}`)) return false;
    this.appendObject(file, name, group, totalBuckets);
    const row = this.rowCount - 1;
    if (plain) this.insert(~cell, h, row);
    else this.byIdentity.set(`${group}|${identity!}`, row);
    return true;
  }

  /** Appends a decoded file without looking for its identity (incremental plans do not fold); it cannot be deleted. */
  appendObject(file: DataFileMeta, name: Uint8Array, group: number, totalBuckets: number): void {
    const row = this.addRow(name.length);
    this.reserve(row, name.length);
    this.chunk!.set(name, this.recOff[row]!);
    this.nameOff[row] = 0;
    this.nameLen[row] = name.length;
    this.groups[row] = group;
    this.levels[row] = file.level;
    this.totals[row] = totalBuckets;
    const seq = file.minSequenceNumber;
    this.minSeqs[row] = seq >= BigInt(Number.MIN_SAFE_INTEGER) && seq <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(seq) : Number.NaN;
    this.rows[row] = file.rowCount;
    this.walkerOf[row] = NO_WALKER;
    this.objects.set(row, file);
  }

  /** {@link deleteWalked} for a decoded file. */
  deleteObject(file: DataFileMeta, group: number): boolean {
    if (!hasPlainIdentity(file)) return this.deleteByIdentity(group, fullFileIdentity(file));
    const name = utf8.encode(file.fileName);
    const cell = this.probe(this.hash(name, 0, name.length, group, file.level), name, 0, name.length, group, file.level);
    if (cell < 0) return false;
    this.kill(this.cells[cell]! - 1);
    this.cells[cell] = DELETED;
    return true;
  }

  /** The file of a row, decoded from its record (a new object on each call) or the object it was added as. */
  meta(row: number): DataFileMeta {
    const w = this.walkerOf[row]!;
    if (w === NO_WALKER) return this.objects.get(row)!;
    return this.walkers[w - 1]!.fileAt(this.chunks[this.recChunk[row]!]!, this.recOff[row]!);
  }

  level(row: number): number {
    return this.levels[row]!;
  }

  rowsOf(row: number): number {
    return this.rows[row]!;
  }

  totalBuckets(row: number): number {
    return this.totals[row]!;
  }

  /**
   * Order of files in a split: level, then min sequence number, then name (as `compareFiles` over
   * decoded files; names compare by their UTF-8 bytes while both are ASCII).
   */
  compare(a: number, b: number): number {
    const byLevel = this.levels[a]! - this.levels[b]!;
    if (byLevel !== 0) return byLevel;
    const sa = this.minSeqs[a]!;
    const sb = this.minSeqs[b]!;
    if (Number.isNaN(sa) || Number.isNaN(sb)) {
      const ma = this.meta(a).minSequenceNumber;
      const mb = this.meta(b).minSequenceNumber;
      if (ma !== mb) return ma < mb ? -1 : 1;
    } else if (sa !== sb) return sa < sb ? -1 : 1;
    return this.compareNames(a, b);
  }

  private compareNames(a: number, b: number): number {
    const ca = this.chunks[this.recChunk[a]!]!;
    const cb = this.chunks[this.recChunk[b]!]!;
    const oa = this.recOff[a]! + this.nameOff[a]!;
    const ob = this.recOff[b]! + this.nameOff[b]!;
    const la = this.nameLen[a]!;
    const lb = this.nameLen[b]!;
    const n = Math.min(la, lb);
    for (let i = 0; i < n; i++) {
      const x = ca[oa + i]!;
      const y = cb[ob + i]!;
      // UTF-16 order (JS string comparison) differs from byte order beyond ASCII: compare strings.
      if ((x | y) >= 0x80) {
        const sa = ca.toString('utf8', oa, oa + la);
        const sb = cb.toString('utf8', ob, ob + lb);
        return sa < sb ? -1 : sa > sb ? 1 : 0;
      }
      if (x !== y) return x - y;
    }
    return la - lb;
  }

  /**
   * Ends the fold: drops the identity table, copies the live records into fresh chunks when
   * deleted ones take much of the arena, and trims the columns to the rows. Returns the live rows
   * grouped by group (`groupCount` groups), each group in ADD order.
   */
  finish(groupCount: number): GroupedRows {
    this.hashes = new Int32Array(0);
    this.cells = new Int32Array(0);
    this.byIdentity.clear();
    this.endBlock();
    if (this.heldBytes * KEEP_BLOCK_SHARE > this.liveBytes) this.compactArena();
    const n = this.rowCount;
    this.recChunk = this.recChunk.slice(0, n);
    this.recOff = this.recOff.slice(0, n);
    this.recLen = this.recLen.slice(0, n);
    this.nameOff = this.nameOff.slice(0, n);
    this.nameLen = this.nameLen.slice(0, n);
    this.levels = this.levels.slice(0, n);
    this.totals = this.totals.slice(0, n);
    this.minSeqs = this.minSeqs.slice(0, n);
    this.rows = this.rows.slice(0, n);
    this.walkerOf = this.walkerOf.slice(0, n);
    this.capacity = n;
    const starts = new Int32Array(groupCount + 1);
    const alive = this.alive;
    const groups = this.groups;
    for (let r = 0; r < n; r++) if (alive[r] === 1) starts[groups[r]! + 1]!++;
    for (let g = 0; g < groupCount; g++) starts[g + 1]! += starts[g]!;
    const next = starts.slice(0, groupCount);
    const rows = new Int32Array(this.live);
    for (let r = 0; r < n; r++) if (alive[r] === 1) rows[next[groups[r]!]!++] = r;
    // Groups and liveness are not needed once the rows are grouped.
    this.groups = new Int32Array(0);
    this.alive = new Uint8Array(0);
    return { rows, starts };
  }

  /** Rows of `group`'s live files in ADD order are given; returns their index in split order (sorted only when they are not already). */
  ordered(rows: Int32Array): Int32Array {
    for (let i = 1; i < rows.length; i++) {
      if (this.compare(rows[i - 1]!, rows[i]!) > 0) return rows.sort((a, b) => this.compare(a, b));
    }
    return rows;
  }

  private walkerId(walker: ManifestEntryWalker): number {
    const walkers = this.walkers;
    for (let i = walkers.length - 1; i >= 0; i--) if (walkers[i] === walker) return i + 1;
    if (walkers.length >= 0xfffe) throw new RangeError('more than 65534 manifest writer schemas in one plan');
    walkers.push(walker);
    return walkers.length;
  }

  /** A new live row whose record is `len` bytes (its place is set by the caller). */
  private addRow(len: number): number {
    if (this.rowCount === this.capacity) this.grow();
    const row = this.rowCount++;
    this.recLen[row] = len;
    this.alive[row] = 1;
    this.live++;
    this.liveBytes += len;
    return row;
  }

  /** Places `row`'s record in `len` bytes of the arena. */
  private reserve(row: number, len: number): void {
    if (this.chunk === null || this.chunkPos + len > this.chunk.length) {
      this.chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, len));
      this.chunkIndex = this.chunks.length;
      this.chunks.push(this.chunk);
      this.heldBytes += this.chunk.length;
      this.chunkPos = 0;
    }
    this.recChunk[row] = this.chunkIndex;
    this.recOff[row] = this.chunkPos;
    this.chunkPos += len;
  }

  /**
   * Keeps the block being folded. What it holds is its whole buffer (a block of an uncompressed
   * manifest is a view of the file's bytes: the file is counted once, with its first block).
   */
  private keepBlock(block: Buffer): void {
    const last = this.chunks.length === 0 ? null : this.chunks[this.chunks.length - 1]!;
    if (last === null || last.buffer !== block.buffer) this.heldBytes += block.buffer.byteLength;
    this.blockChunk = this.chunks.length;
    this.chunks.push(block);
  }

  /** A new block is walked: the last one is done with. */
  private startBlock(block: Buffer): void {
    this.endBlock();
    this.block = block;
    this.blockChunk = -1;
    this.blockFirstRow = this.rowCount;
  }

  /**
   * Ends the block being folded: when its live records take less than {@link KEEP_BLOCK_SHARE}
   * of it (most of its entries filtered out or deleted), they are copied into the arena and the
   * block is let go.
   */
  private endBlock(): void {
    const block = this.block;
    const at = this.blockChunk;
    this.block = null;
    this.blockChunk = -1;
    if (block === null || at < 0) return;
    let bytes = 0;
    for (let r = this.blockFirstRow; r < this.rowCount; r++) if (this.alive[r] === 1 && this.recChunk[r] === at) bytes += this.recLen[r]!;
    if (bytes >= block.length * KEEP_BLOCK_SHARE) return;
    for (let r = this.blockFirstRow; r < this.rowCount; r++) {
      if (this.alive[r] !== 1 || this.recChunk[r] !== at) continue;
      const from = this.recOff[r]!;
      const len = this.recLen[r]!;
      this.reserve(r, len);
      block.copy(this.chunk!, this.recOff[r]!, from, from + len);
    }
    // The block's slot stays (indexes of later chunks do not move), empty. Its buffer is still
    // counted when other kept blocks view it.
    this.chunks[at] = EMPTY_CHUNK;
    const owned = block.buffer.byteLength === block.length;
    if (owned || !this.chunks.some((c) => c.buffer === block.buffer)) this.heldBytes -= block.buffer.byteLength;
  }

  private kill(row: number): void {
    this.alive[row] = 0;
    this.live--;
    this.liveBytes -= this.recLen[row]!;
    this.objects.delete(row);
  }

  private deleteByIdentity(group: number, identity: string): boolean {
    const key = `${group}|${identity}`;
    const row = this.byIdentity.get(key);
    if (row === undefined) return false;
    this.byIdentity.delete(key);
    this.kill(row);
    return true;
  }

  /** Makes room for `size` rows (default: twice as many as now). */
  private grow(size = Math.max(MIN_ROWS, this.capacity * 2)): void {
    const n = this.rowCount;
    this.minSeqs = resized(this.minSeqs, size, n);
    this.rows = resized(this.rows, size, n);
    this.recChunk = resized(this.recChunk, size, n);
    this.recOff = resized(this.recOff, size, n);
    this.recLen = resized(this.recLen, size, n);
    this.nameOff = resized(this.nameOff, size, n);
    this.nameLen = resized(this.nameLen, size, n);
    this.groups = resized(this.groups, size, n);
    this.levels = resized(this.levels, size, n);
    this.totals = resized(this.totals, size, n);
    this.walkerOf = resized(this.walkerOf, size, n);
    this.alive = resized(this.alive, size, n);
    this.capacity = size;
  }

  /**
   * The cell of the live plain-identity row with this identity (hash `h`, name `bytes[start, end)`),
   * or, when there is none, `~cell` of the cell to put it in (the first deleted cell on the probe,
   * else the empty one ending it).
   */
  private probe(h: number, bytes: Uint8Array, start: number, end: number, group: number, level: number): number {
    const cells = this.cells;
    const hashes = this.hashes;
    const mask = cells.length - 1;
    let free = -1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const c = cells[i]!;
      if (c === EMPTY) return ~(free < 0 ? i : free);
      if (c === DELETED) {
        if (free < 0) free = i;
      } else if (hashes[i] === h && this.same(c - 1, bytes, start, end, group, level)) return i;
    }
  }

  /** Whether `row` is in `group` at `level` with the name `bytes[start, end)`. */
  private same(row: number, bytes: Uint8Array, start: number, end: number, group: number, level: number): boolean {
    const len = end - start;
    if (this.groups[row] !== group || this.levels[row] !== level || this.nameLen[row] !== len) return false;
    const chunk = this.chunks[this.recChunk[row]!]!;
    const o = this.recOff[row]! + this.nameOff[row]!;
    // Names of one table share long prefixes (`data-<uuid>-`): compare from the end.
    for (let i = len - 1; i >= 0; i--) if (chunk[o + i] !== bytes[start + i]) return false;
    return true;
  }

  private insert(cell: number, h: number, row: number): void {
    if (this.cells[cell] === EMPTY) this.usedCells++;
    this.hashes[cell] = h;
    this.cells[cell] = row + 1;
    // At most half full, deleted cells included, so probes stay short and always end.
    if (this.usedCells * 2 > this.cells.length) this.rebuild();
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

  /** Copies the records of live rows into new arena chunks, leaving blocks and the records of deleted rows behind. */
  private compactArena(): void {
    const old = this.chunks.splice(0);
    this.chunk = null;
    this.chunkPos = 0;
    this.heldBytes = 0;
    for (let r = 0; r < this.rowCount; r++) {
      if (this.alive[r] !== 1) continue;
      const len = this.recLen[r]!;
      const src = old[this.recChunk[r]!]!;
      const from = this.recOff[r]!;
      this.reserve(r, len);
      src.copy(this.chunk!, this.recOff[r]!, from, from + len);
    }
  }
}

type Column = Float64Array | Uint32Array | Int32Array | Uint16Array | Uint8Array;

/** A column of `size` rows holding the first `n` of `column`. */
function resized<T extends Column>(column: T, size: number, n: number): T {
  const out = new (column.constructor as new (length: number) => T)(size);
  out.set(column.subarray(0, n) as ArrayLike<number>);
  return out;
}
