import { describe, expect, it } from 'vitest';
import type { TableSchema, Value } from '@tidemark/format';
import { mergeEngineOptions, mergeSorted, sortRecords, type KeyValueRecord, type MergeEngineOptions } from '../src/read/merge-engine.js';
import { UnsupportedTableFeatureError } from '../src/scan/errors.js';

const dedup: MergeEngineOptions = { engine: 'deduplicate', ignoreDelete: false, removeRecordOnDelete: false, sequenceFields: ['ts'] };
const partial: MergeEngineOptions = { ...dedup, engine: 'partial-update' };

let nextRow = 0;
function rec(key: string, sequence: number, userSequence: Value[], kind = 0): KeyValueRecord {
  return { key: [key], sequence: BigInt(sequence), userSequence, kind, chunk: 0, row: nextRow++ };
}

describe('sequence.field ordering', () => {
  it('deduplicate keeps the record with the highest sequence field, not the highest _SEQUENCE_NUMBER', () => {
    const records = [rec('a', 1, [30n]), rec('a', 2, [10n]), rec('a', 3, [20n])];
    const out = mergeSorted(sortRecords(records), dedup);
    expect(out.map((m) => m.record.sequence)).toEqual([1n]);
  });

  it('orders null sequence-field values first and breaks ties by _SEQUENCE_NUMBER', () => {
    const records = [rec('a', 5, [null]), rec('a', 1, [7]), rec('b', 4, [7]), rec('b', 2, [7]), rec('b', 9, [null])];
    expect(mergeSorted(sortRecords(records), dedup).map((m) => `${String(m.record.key[0])}@${m.record.sequence}`)).toEqual(['a@1', 'b@4']);
  });

  it('compares several sequence fields left to right', () => {
    const records = [rec('a', 1, [2, 'b']), rec('a', 2, [2, 'a']), rec('a', 3, [1, 'z'])];
    expect(mergeSorted(sortRecords(records), { ...dedup, sequenceFields: ['x', 'y'] })[0]!.record.sequence).toBe(1n);
  });

  it('a late-arriving -D with an older sequence field does not delete a newer row', () => {
    const records = [rec('a', 1, [100n]), rec('a', 2, [50n], 3)];
    expect(mergeSorted(sortRecords(records), dedup).map((m) => m.record.sequence)).toEqual([1n]);
  });

  it('partial-update folds records in sequence-field order', () => {
    // column 0 is non-null in both records: the one with the higher sequence field wins.
    const newer = rec('k', 1, [9]);
    const older = rec('k', 2, [3]);
    const out = mergeSorted(sortRecords([newer, older]), partial, 1, () => false);
    expect(out[0]!.columnSources![0]).toBe(newer);
  });

  it('is read from the options (comma-separated) and rejected for first-row', () => {
    const schema = (options: Record<string, string>): TableSchema => ({
      version: 3,
      id: 0,
      fields: [
        { id: 0, name: 'k', type: { root: 'INT', nullable: false } },
        { id: 1, name: 'a', type: { root: 'BIGINT', nullable: true } },
        { id: 2, name: 'b', type: { root: 'INT', nullable: true } },
      ],
      highestFieldId: 2,
      partitionKeys: [],
      primaryKeys: ['k'],
      options,
      timeMillis: 0,
    });
    expect(mergeEngineOptions(schema({ 'sequence.field': 'a, b' })).sequenceFields).toEqual(['a', 'b']);
    expect(mergeEngineOptions(schema({ 'merge-engine': 'partial-update', 'sequence.field': 'b' })).sequenceFields).toEqual(['b']);
    expect(() => mergeEngineOptions(schema({ 'merge-engine': 'first-row', 'sequence.field': 'a' }))).toThrow(UnsupportedTableFeatureError);
    expect(mergeEngineOptions(schema({ 'merge-engine': 'partial-update', 'fields.b.sequence-group': 'a' })).sequenceGroups).toEqual([
      { sequenceFields: ['b'], fields: ['a'] },
    ]);
    expect(() => mergeEngineOptions(schema({ 'merge-engine': 'aggregation', 'fields.b.sequence-group': 'a' }))).toThrow(
      /aggregation with sequence groups/,
    );
  });
});
