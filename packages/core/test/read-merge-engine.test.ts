import { describe, expect, it } from 'vitest';
import { mergeEngineOptions, mergeSorted, sortRecords, type KeyValueRecord, type MergeEngineOptions } from '../src/read/merge-engine.js';
import { UnsupportedTableFeatureError } from '../src/scan/errors.js';
import type { TableSchema } from '@tidemark/format';

const dedup: MergeEngineOptions = { engine: 'deduplicate', ignoreDelete: false, removeRecordOnDelete: false };
const firstRow: MergeEngineOptions = { engine: 'first-row', ignoreDelete: false, removeRecordOnDelete: false };
const partial: MergeEngineOptions = { engine: 'partial-update', ignoreDelete: false, removeRecordOnDelete: false };

let nextRow = 0;
function rec(key: string, sequence: number, kind = 0, chunk = 0): KeyValueRecord {
  return { key: [key], sequence: BigInt(sequence), kind, chunk, row: nextRow++ };
}

/** Which (key, sequence) each merged row came from. */
function picked(records: KeyValueRecord[], options: MergeEngineOptions): string[] {
  return mergeSorted(sortRecords([...records]), options).map((m) => `${String(m.record.key[0])}@${m.record.sequence}`);
}

describe('merge engines on in-memory records', () => {
  it('deduplicate keeps the record with the highest sequence per key, independent of input order', () => {
    const records = [rec('b', 5), rec('a', 1), rec('a', 7), rec('b', 2), rec('c', 3)];
    expect(picked(records, dedup)).toEqual(['a@7', 'b@5', 'c@3']);
  });

  it('deduplicate drops a key whose last record is -D or -U', () => {
    const records = [rec('a', 1), rec('a', 2, 3), rec('b', 1), rec('b', 2, 1), rec('c', 1), rec('c', 2, 2)];
    expect(picked(records, dedup)).toEqual(['c@2']);
  });

  it('deduplicate with ignore-delete skips retractions and keeps the last insert', () => {
    const records = [rec('a', 1), rec('a', 2, 3)];
    expect(picked(records, { ...dedup, ignoreDelete: true })).toEqual(['a@1']);
  });

  it('first-row keeps the earliest record per key', () => {
    const records = [rec('a', 9), rec('a', 4), rec('b', 3), rec('b', 8)];
    expect(picked(records, firstRow)).toEqual(['a@4', 'b@3']);
  });

  it('orders keys by code point like Paimon (not by UTF-16 unit)', () => {
    const records = [rec('\u{1F600}', 1), rec('\uFF21', 1)];
    expect(picked(records, dedup)).toEqual(['\uFF21@1', '\u{1F600}@1']);
  });

  it('partial-update takes each column from the latest record where it is non-null', () => {
    // 3 columns; null pattern per (sequence): seq1 [x, x, x], seq2 [x, null, x], seq3 [null, null, x]
    const r1 = rec('k', 1);
    const r2 = rec('k', 2);
    const r3 = rec('k', 3);
    const nulls = new Map<KeyValueRecord, boolean[]>([
      [r1, [false, false, false]],
      [r2, [false, true, false]],
      [r3, [true, true, false]],
    ]);
    const out = mergeSorted(sortRecords([r3, r1, r2]), partial, 3, (r, c) => nulls.get(r)![c]!);
    expect(out).toHaveLength(1);
    expect(out[0]!.columnSources!.map((r) => r?.sequence)).toEqual([2n, 1n, 3n]);
  });

  it('partial-update rejects retractions unless configured', () => {
    const records = [rec('k', 1), rec('k', 2, 3)];
    expect(() => mergeSorted(sortRecords(records), partial, 1)).toThrow(UnsupportedTableFeatureError);
    expect(mergeSorted(sortRecords([...records]), { ...partial, removeRecordOnDelete: true }, 1)).toEqual([]);
    expect(mergeSorted(sortRecords([...records]), { ...partial, ignoreDelete: true }, 1)).toHaveLength(1);
  });

  it('reads the engine from table options and rejects unsupported ones', () => {
    const schema = (options: Record<string, string>): TableSchema => ({
      version: 3,
      id: 0,
      fields: [],
      highestFieldId: 0,
      partitionKeys: [],
      primaryKeys: ['k'],
      options,
      timeMillis: 0,
    });
    expect(mergeEngineOptions(schema({})).engine).toBe('deduplicate');
    expect(mergeEngineOptions(schema({ 'merge-engine': 'first-row', 'ignore-delete': 'true' }))).toEqual({
      engine: 'first-row',
      ignoreDelete: true,
      removeRecordOnDelete: false,
    });
    expect(mergeEngineOptions(schema({ 'merge-engine': 'aggregation' })).engine).toBe('aggregation');
    expect(() => mergeEngineOptions(schema({ 'merge-engine': 'no-such-engine' }))).toThrow(UnsupportedTableFeatureError);
    expect(() => mergeEngineOptions(schema({ 'merge-engine': 'no-such-engine' }))).toThrow(/no-such-engine/);
  });
});
