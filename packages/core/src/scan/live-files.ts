/**
 * The set of manifest entries being folded (ADD/DELETE) during planning, keyed by file identity:
 * partition, bucket, level, file name, extra files, embedded index and external path.
 *
 * A map keyed by an identity string costs a new string per entry (and its hash) for the whole
 * plan. Here the usual entry (no extra files, index or external path) is keyed by its file name,
 * a string the entry holds anyway, and the rest of its identity is compared on a hit; entries with
 * other identity parts, and the rare second identity sharing a file name, go to a map keyed by
 * the full identity string. Partition rows must be shared per partition (compared by reference).
 */
import type { ManifestEntry } from '@tidemark/format';

/** Identity string of an entry; `partitionId` is the entry's partition's number in the run. */
export type FullIdentity = (entry: ManifestEntry) => string;

function isSimple(e: ManifestEntry): boolean {
  const f = e.file;
  return f.extraFiles.length === 0 && f.embeddedIndex === null && f.externalPath === null;
}

function sameSimpleIdentity(a: ManifestEntry, b: ManifestEntry): boolean {
  return a.partition === b.partition && a.bucket === b.bucket && a.file.level === b.file.level && isSimple(a);
}

/** Entries by identity (see the module comment); iteration gives each entry once. */
export class EntriesByIdentity {
  private readonly byName = new Map<string, ManifestEntry>();
  private readonly byIdentity = new Map<string, ManifestEntry>();

  constructor(private readonly identity: FullIdentity) {}

  get size(): number {
    return this.byName.size + this.byIdentity.size;
  }

  has(e: ManifestEntry): boolean {
    if (isSimple(e)) {
      const p = this.byName.get(e.file.fileName);
      if (p !== undefined && sameSimpleIdentity(p, e)) return true;
    }
    return this.byIdentity.size > 0 && this.byIdentity.has(this.identity(e));
  }

  /** Adds `e` unless an entry with its identity is there; returns false then (nothing changes). */
  add(e: ManifestEntry): boolean {
    if (isSimple(e)) {
      // One lookup serves both the duplicate check and the choice of map (maps this large cost a
      // cache miss or two per operation).
      const p = this.byName.get(e.file.fileName);
      if (p === undefined) {
        if (this.byIdentity.size > 0 && this.byIdentity.has(this.identity(e))) return false;
        this.byName.set(e.file.fileName, e);
        return true;
      }
      if (sameSimpleIdentity(p, e)) return false;
    }
    const id = this.identity(e);
    if (this.byIdentity.has(id)) return false;
    this.byIdentity.set(id, e);
    return true;
  }

  /** Removes the entry with `e`'s identity; false when there is none. */
  delete(e: ManifestEntry): boolean {
    if (isSimple(e)) {
      const p = this.byName.get(e.file.fileName);
      if (p !== undefined && sameSimpleIdentity(p, e)) return this.byName.delete(e.file.fileName);
    }
    return this.byIdentity.size > 0 && this.byIdentity.delete(this.identity(e));
  }

  *values(): IterableIterator<ManifestEntry> {
    yield* this.byName.values();
    yield* this.byIdentity.values();
  }

  /** Any one entry, or undefined when empty. */
  first(): ManifestEntry | undefined {
    return this.byName.values().next().value ?? this.byIdentity.values().next().value;
  }
}
