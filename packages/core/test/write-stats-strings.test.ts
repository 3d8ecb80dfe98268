/**
 * The min/max statistics of string and binary columns compare unsigned bytes (Paimon's
 * BinaryString and byte[] order), four bytes at a time where both values have them. Checked
 * against a plain sort of the same values: shared prefixes longer than a word, a value that is a
 * prefix of another, bytes at or above 0x80 (which a signed comparison would put first), equal
 * runs, nulls, an all-null batch and a sliced batch (offsets not starting at 0).
 */
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { deserializeBinaryRow, parseTypeString, utf8Vector, type DataField } from '@tidemark/format';
import { FileStatsCollector } from '../src/write/value-stats.js';

const fields: DataField[] = [{ id: 0, name: 's', type: parseTypeString('STRING') }];
const options = { statsModeOf: () => ({ kind: 'full' as const }), statsDenseStore: true };

function batch(values: readonly (string | null)[]): arrow.RecordBatch {
  const field = new arrow.Field('s', new arrow.Utf8(), true);
  const data = arrow.makeData({
    type: new arrow.Struct([field]),
    length: values.length,
    nullCount: 0,
    children: [utf8Vector(values).data[0]!],
  });
  return new arrow.RecordBatch(new arrow.Schema([field]), data);
}

function bounds(batches: readonly arrow.RecordBatch[]): unknown[] {
  const c = new FileStatsCollector(fields, options);
  for (const b of batches) c.add(b);
  const { valueStats } = c.result();
  return [
    deserializeBinaryRow(valueStats.minValues, [fields[0]!.type])[0],
    deserializeBinaryRow(valueStats.maxValues, [fields[0]!.type])[0],
    valueStats.nullCounts?.[0],
  ];
}

const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

describe('min/max statistics of string columns', () => {
  it('order values by unsigned bytes, as a sort of the same values does', () => {
    const tricky = [
      'name-0000123',
      'name-0000122',
      'name-00001229',
      'name-',
      'name',
      'nam',
      'name-é',
      'name-z',
      'nameéabc',
      'namezzzz',
      'nam\u00ff\u00ff',
      'name-\u{1F600}',
      'a'.repeat(9),
      'a'.repeat(8),
    ];
    for (let round = 0; round < 40; round++) {
      // A deterministic shuffle of the tricky values and some filler, cut into batches of varying size.
      const values: (string | null)[] = [];
      for (let i = 0; i < 200; i++) {
        const k = (i * 7919 + round * 104729) % 1009;
        values.push(k % 13 === 0 ? null : k % 3 === 0 ? tricky[k % tricky.length]! : `name-${String(k * 31).padStart(7, '0')}`);
      }
      const present = values.filter((v): v is string => v !== null).sort(byBytes);
      const cut = 17 + round;
      const batches = [batch([null, null]), batch(values.slice(0, cut)), batch(['zz', ...values.slice(cut)]).slice(1)];
      expect(bounds(batches)).toEqual([present[0], present[present.length - 1], values.length - present.length + 2]);
    }
  });

  it('keep the first bound among equal runs and across batches', () => {
    const runs = Array.from({ length: 3_000 }, (_, i) => `2024-01-${String(Math.floor(i / 100) + 1).padStart(2, '0')}`);
    expect(bounds([batch(runs.slice(0, 1_234)), batch(runs.slice(1_234))])).toEqual(['2024-01-01', '2024-01-30', 0]);
    expect(bounds([batch(['ä', 'z', 'a'])])).toEqual(['a', 'ä', 0]);
    // Decided in a byte that starts a four-byte word: 0xC3 must sort above 'z' there too.
    expect(bounds([batch(['abcdzzzz', 'abcdé123', 'abcdaaaa'])])).toEqual(['abcdaaaa', 'abcdé123', 0]);
  });
});
