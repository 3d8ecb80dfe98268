/**
 * The set of manifest entries being folded (ADD/DELETE) during planning, keyed by file identity:
 * partition, bucket, level, file name, extra files, embedded index and external path.
 *
 * A map keyed by an identity string costs a new string per entry for the whole plan, and string
 * keys make every operation of a map this large slow. Here the usual entry (no extra files, index
 * or external path) is keyed by a small-integer hash of its file name, and its identity (name,
 * partition, bucket, level) is compared on a hit; entries with other identity parts go to a map
 * keyed by the full identity string. Partition rows must be shared per partition (compared by
 * reference).
 */
import type { ManifestEntry } from '@tidemark/format';

/** Identity string of an entry; `partitionId` is the entry's partition's number in the run. */
export type FullIdentity = (entry: ManifestEntry) => string;

function isSimple(e: ManifestEntry): boolean {
  const f = e.file;
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

/** Entries by identity (see the module comment); iteration gives each entry once. */
export class EntriesByIdentity {
  /** Usual entries by a hash of their file name: one entry, or several when hashes collide. */
  private readonly byName = new Map<number, ManifestEntry | ManifestEntry[]>();
  private named = 0;
  private readonly byIdentity = new Map<string, ManifestEntry>();

  /**
   * @param identity full identity string, for entries with extra files, an index or an external path
   * @param hash hash of a file name (a parameter so tests can force collisions)
   */
  constructor(
    private readonly identity: FullIdentity,
    private readonly hash: (name: string) => number = nameHash,
  ) {}

  get size(): number {
    return this.named + this.byIdentity.size;
  }

  has(e: ManifestEntry): boolean {
    if (!isSimple(e)) return this.byIdentity.size > 0 && this.byIdentity.has(this.identity(e));
    const slot = this.byName.get(this.hash(e.file.fileName));
    if (slot === undefined) return false;
    if (!Array.isArray(slot)) return same(slot, e);
    return slot.some((x) => same(x, e));
  }

  /** Adds `e` unless an entry with its identity is there; returns false then (nothing changes). */
  add(e: ManifestEntry): boolean {
    if (!isSimple(e)) {
      const id = this.identity(e);
      if (this.byIdentity.has(id)) return false;
      this.byIdentity.set(id, e);
      return true;
    }
    // Keyed by a small integer: a million string keys make each map operation several times
    // slower (equality checks reach into the key strings).
    const h = this.hash(e.file.fileName);
    const slot = this.byName.get(h);
    if (slot === undefined) this.byName.set(h, e);
    else if (!Array.isArray(slot)) {
      if (same(slot, e)) return false;
      this.byName.set(h, [slot, e]);
    } else {
      if (slot.some((x) => same(x, e))) return false;
      slot.push(e);
    }
    this.named++;
    return true;
  }

  /** Removes the entry with `e`'s identity; false when there is none. */
  delete(e: ManifestEntry): boolean {
    if (!isSimple(e)) return this.byIdentity.size > 0 && this.byIdentity.delete(this.identity(e));
    const h = this.hash(e.file.fileName);
    const slot = this.byName.get(h);
    if (slot === undefined) return false;
    if (!Array.isArray(slot)) {
      if (!same(slot, e)) return false;
      this.byName.delete(h);
    } else {
      const i = slot.findIndex((x) => same(x, e));
      if (i < 0) return false;
      slot.splice(i, 1);
      if (slot.length === 1) this.byName.set(h, slot[0]!);
    }
    this.named--;
    return true;
  }

  *values(): IterableIterator<ManifestEntry> {
    for (const slot of this.byName.values()) {
      if (Array.isArray(slot)) yield* slot;
      else yield slot;
    }
    yield* this.byIdentity.values();
  }

  /** Any one entry, or undefined when empty. */
  first(): ManifestEntry | undefined {
    return this.values().next().value;
  }
}

/** Same identity, for two entries without extra files, embedded index or external path. */
function same(a: ManifestEntry, b: ManifestEntry): boolean {
  return a.file.fileName === b.file.fileName && a.partition === b.partition && a.bucket === b.bucket && a.file.level === b.file.level;
}
