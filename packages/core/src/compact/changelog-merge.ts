/**
 * Compaction that also produces the changelog, for the `full-compaction` and `lookup` changelog
 * producers, as Paimon's changelog merge-function wrappers do. Each key of a window is merged as a
 * plain compaction merges it; in addition its value before the compaction (what readers saw) is
 * compared with the merged value after it, and the difference becomes changelog rows:
 * - no old value (or an old retraction), new value an insert/update: `+I new`;
 * - old value, new result a retraction: `-D old`;
 * - old and new values: `-U old`, `+U new` (left out with `changelog-producer.row-deduplicate`
 *   when the two are equal).
 *
 * The old value is, for `full-compaction`, the key's record in the max level (a full compaction
 * merges every level, so it is among the inputs; a key whose only record is that one did not
 * change); for `lookup`, the newest record of a level ≥ 1 among the inputs, else the key's record
 * in the levels below the output level, looked up, and changelog is only produced for keys with
 * level-0 records (the new data).
 *
 * Without `emit` no changelog is produced and only the merge is left: for `lookup`, each key's
 * level-0 records merged with its looked-up old value, as Java's lookup wrapper merges them in
 * every compaction of a deletion-vector table (whose reads take a key's one record in levels ≥ 1
 * as it is, so that record must hold everything merged so far).
 */
import { isDeepStrictEqual } from 'node:util';
import type { DataField, TableSchema, Value } from '@tidemark/format';
import { chunkedAggregationInput } from '../read/aggregated-columns.js';
import { valueReader } from '../read/arrow-values.js';
import {
  KeyMerger,
  ROW_KIND_DELETE,
  ROW_KIND_INSERT,
  ROW_KIND_UPDATE_AFTER,
  ROW_KIND_UPDATE_BEFORE,
  forEachKey,
  isRetraction,
  sortRecords,
  type KeyValueRecord,
  type MergeEngineOptions,
  type MergedRow,
} from '../read/merge-engine.js';
import { KeyValueChunks, MergedKeyValues } from '../read/merged-columns.js';
import { buildColumn } from '../write/arrow-columns.js';
import { trimmedKeyFields } from '../write/key-value/key-value.js';
import type { KeyValueSegment, WindowMerge } from './merge-tree-reader.js';

/** Changelog producers that produce their changelog in compaction. */
export type CompactionChangelogProducer = 'full-compaction' | 'lookup';

/** A key's record found in the levels below a compaction: its values in the table's fields. */
export interface LookupHit {
  readonly row: readonly Value[];
  readonly sequence: bigint;
  readonly kind: number;
  readonly level: number;
}

/** Looks up keys (trimmed primary-key values) in the levels below the output level; null where absent. */
export type KeyLookup = (keys: readonly (readonly Value[])[]) => Promise<(LookupHit | null)[]>;

/** Settings of {@link changelogWindowMerge}. */
export interface ChangelogMergeOptions {
  readonly schema: TableSchema;
  readonly merge: MergeEngineOptions;
  readonly producer: CompactionChangelogProducer;
  /** Max level of the bucket (`full-compaction`: the level holding the old values). */
  readonly maxLevel: number;
  /** Retractions are left out of the compaction output. */
  readonly dropDelete: boolean;
  /** `changelog-producer.row-deduplicate`. */
  readonly rowDeduplicate: boolean;
  /** `changelog-producer.row-deduplicate-ignore-fields`. */
  readonly rowDeduplicateIgnoreFields?: readonly string[];
  /** `lookup`: finds old values of keys whose inputs are all of level 0. */
  readonly lookup?: KeyLookup;
  /** Receives the changelog rows of each window, in key order; absent, no changelog is produced. */
  readonly emit?: (changelog: KeyValueSegment) => Promise<void>;
}

const isAdd = (kind: number): boolean => !isRetraction(kind);

/** A {@link WindowMerge} producing the compaction output and, through `emit`, the changelog. */
export function changelogWindowMerge(o: ChangelogMergeOptions): WindowMerge {
  const { schema, merge } = o;
  const keyFields = trimmedKeyFields(schema);
  const sequenceFields = (merge.sequenceFields ?? []).map((n) => schema.fields.find((f) => f.name === n)!);
  const types = schema.fields.map((f) => f.type);
  const ignored = new Set(o.rowDeduplicateIgnoreFields ?? []);
  const compared = schema.fields.map((f, i) => (ignored.has(f.name) ? -1 : i)).filter((i) => i >= 0);
  return async (segments) => {
    const held = new KeyValueChunks(schema.fields, keyFields, sequenceFields);
    const levelOf: number[] = [];
    for (const s of segments) {
      held.add(s.columns, s.sequence, s.kinds, s.rows);
      levelOf.push(s.level ?? 0);
    }
    const level = (r: KeyValueRecord): number => levelOf[r.chunk]!;
    // Sorted in place; records appended later (looked-up values) stay out of this order.
    const sorted = sortRecords(held.records, merge).slice();
    const groups: Array<[number, number]> = [];
    forEachKey(sorted, (start, end) => groups.push([start, end]));

    const found = new Map<number, KeyValueRecord>();
    if (o.producer === 'lookup' && o.lookup !== undefined) {
      const wanted: number[] = [];
      groups.forEach(([start, end], g) => {
        let old = false;
        let fresh = false;
        for (let i = start; i < end; i++) {
          if (level(sorted[i]!) > 0) old = true;
          else fresh = true;
        }
        if (fresh && !old) wanted.push(g);
      });
      if (wanted.length > 0) {
        const hits = await o.lookup(wanted.map((g) => sorted[groups[g]![0]]!.key));
        const present = hits.map((hit, j) => ({ hit, g: wanted[j]! })).filter((x): x is { hit: LookupHit; g: number } => x.hit !== null);
        if (present.length > 0) {
          // The old values become one chunk; its level is never asked (they are not in `sorted`).
          const before = held.records.length;
          const columns = schema.fields.map((f, c) =>
            buildColumn(
              f.type,
              present.map(({ hit }) => hit.row[c] ?? null),
            ),
          );
          held.add(
            columns,
            present.map(({ hit }) => hit.sequence),
            present.map(({ hit }) => hit.kind),
            present.length,
          );
          levelOf.push(present[0]!.hit.level);
          present.forEach(({ g }, j) => found.set(g, held.records[before + j]!));
        }
      }
    }

    const merger = new KeyMerger(merge, {
      names: schema.fields.map((f) => f.name),
      types,
      input: chunkedAggregationInput(held.chunks, types),
    });
    const results: MergedRow[] = [];
    const changelog: MergedRow[] = [];
    const as = (row: MergedRow | KeyValueRecord, kind: number): MergedRow =>
      'record' in row ? { ...row, kind } : { record: row, kind, sequence: row.sequence };
    const changes = (before: KeyValueRecord | null, after: MergedRow | null): void => {
      if (before === null || !isAdd(before.kind)) {
        if (after !== null && isAdd(after.kind)) changelog.push(as(after, ROW_KIND_INSERT));
      } else if (after === null || !isAdd(after.kind)) {
        changelog.push(as(before, ROW_KIND_DELETE));
      } else {
        changelog.push(as(before, ROW_KIND_UPDATE_BEFORE), as(after, ROW_KIND_UPDATE_AFTER));
      }
    };

    groups.forEach(([start, end], g) => {
      let result: MergedRow | null;
      if (o.producer === 'full-compaction') {
        let top: KeyValueRecord | null = null;
        for (let i = start; i < end; i++) if (level(sorted[i]!) === o.maxLevel) top = sorted[i]!;
        result = merger.merge(sorted, start, end);
        // A key whose only record is the max-level one did not change.
        if (o.emit !== undefined && !(top !== null && end - start === 1)) changes(top, result);
        if (result !== null && !isAdd(result.kind)) result = null;
      } else {
        let high: KeyValueRecord | null = null;
        const candidates: KeyValueRecord[] = [];
        for (let i = start; i < end; i++) {
          const r = sorted[i]!;
          if (level(r) > 0) high = r;
          else candidates.push(r);
        }
        const fresh = candidates.length > 0;
        high ??= found.get(g) ?? null;
        // Older records of levels ≥ 1 are superseded by the newest one (it holds their merge).
        if (high !== null) candidates.push(high);
        sortRecords(candidates, merge);
        result = merger.merge(candidates, 0, candidates.length);
        // First-row keeps a key's first value: only a new key is a change (Java's first-row wrapper).
        if (o.emit !== undefined && fresh && (merge.engine !== 'first-row' || high === null)) changes(high, result);
        if (result !== null && o.dropDelete && !isAdd(result.kind)) result = null;
      }
      if (result !== null) results.push(result);
    });

    if (o.emit !== undefined && changelog.length > 0) {
      let rows = changelog;
      if (o.rowDeduplicate) rows = withoutUnchangedPairs(held, rows, compared);
      if (rows.length > 0) await o.emit(segmentOf(held, rows));
    }
    return results.length === 0 ? null : segmentOf(held, results);
  };
}

/** The rows as a segment of Arrow columns. */
function segmentOf(held: KeyValueChunks, rows: readonly MergedRow[]): KeyValueSegment {
  const types = held.fields.map((f) => f.type);
  const merged = new MergedKeyValues(held, rows, held.fields.length, chunkedAggregationInput(held.chunks, types));
  return { columns: merged.columns(), sequence: merged.sequences(), kinds: merged.kinds(), rows: rows.length };
}

/** Drops each -U/+U pair whose values are equal in the `compared` columns. */
function withoutUnchangedPairs(held: KeyValueChunks, rows: readonly MergedRow[], compared: readonly number[]): MergedRow[] {
  const segment = segmentOf(held, rows);
  const fields: readonly DataField[] = held.fields;
  const readers = compared.map((c) => valueReader(segment.columns[c]!, fields[c]!.type));
  const out: MergedRow[] = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    if (r.kind === ROW_KIND_UPDATE_BEFORE && rows[i + 1]?.kind === ROW_KIND_UPDATE_AFTER) {
      if (readers.every((read) => isDeepStrictEqual(read(i), read(i + 1)))) {
        i++;
        continue;
      }
    }
    out.push(r);
  }
  return out;
}
