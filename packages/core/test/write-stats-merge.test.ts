/**
 * FileStatsCollector.addFileStats: the statistics of files merged into one file's give what its rows
 * give (for `truncate(n)`, `full` and `counts` columns, nulls and all-null files included), and
 * fileStatsBlocker names the files whose statistics cannot stand in for their rows.
 */
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { parseTypeString, serializeBinaryRow, utf8Vector, type DataField } from '@tidemark/format';
import type { StatsMode } from '../src/core-options.js';
import { FileStatsCollector, type FileValueStats } from '../src/write/value-stats.js';

const fields: DataField[] = [
  { id: 0, name: 's', type: parseTypeString('STRING') },
  { id: 1, name: 'n', type: parseTypeString('BIGINT') },
  { id: 2, name: 'c', type: parseTypeString('STRING') },
];
const modes: Record<string, StatsMode> = { s: { kind: 'truncate', length: 4 }, n: { kind: 'full' }, c: { kind: 'counts' } };
const options = { statsModeOf: (name: string): StatsMode => modes[name]!, statsDenseStore: true };

function batch(rows: readonly { s: string | null; n: bigint | null }[]): arrow.RecordBatch {
  const schema = new arrow.Schema([
    new arrow.Field('s', new arrow.Utf8(), true),
    new arrow.Field('n', new arrow.Int64(), true),
    new arrow.Field('c', new arrow.Utf8(), true),
  ]);
  return new arrow.RecordBatch(
    schema,
    arrow.makeData({
      type: new arrow.Struct(schema.fields),
      length: rows.length,
      nullCount: 0,
      children: [
        utf8Vector(rows.map((r) => r.s)).data[0]!,
        arrow.vectorFromArray(
          rows.map((r) => r.n),
          new arrow.Int64(),
        ).data[0]!,
        utf8Vector(rows.map((r) => r.s)).data[0]!,
      ],
    }),
  );
}

function statsOf(batches: readonly arrow.RecordBatch[]): FileValueStats {
  const c = new FileStatsCollector(fields, options);
  for (const b of batches) c.add(b);
  return c.result();
}

describe('merging the statistics of files', () => {
  it('gives what the rows of all files give, truncated bounds included', () => {
    const values = ['zz', 'abcdefgh', 'abcdzzzz', 'abce', 'b\u{10FFFF}xyz', 'abcd', 'a', 'zzzzzzzzzz', 'yy\u00ff\u00ffq', null];
    for (let round = 0; round < 30; round++) {
      // Deterministic files of 0–4 rows each (all-null ones too), in a rotating order.
      const rows = values.map((s, i) => ({
        s: values[(i + round) % values.length]!,
        n: s === null ? null : BigInt((i * 37 + round) % 11) - 5n,
      }));
      const files: (typeof rows)[] = [];
      for (let at = 0, k = round; at < rows.length; k++) {
        const take = k % 5;
        files.push(rows.slice(at, at + take));
        at += take;
      }
      const whole = statsOf([batch(rows)]);
      const merged = new FileStatsCollector(fields, options);
      for (const f of files.filter((f) => f.length > 0)) {
        const file = { rowCount: f.length, ...statsOf([batch(f)]) };
        expect(merged.fileStatsBlocker(file)).toBeNull();
        merged.addFileStats(file);
      }
      expect(merged.result()).toEqual(whole);
    }
  });

  it('names files whose statistics cannot stand in for their rows', () => {
    const c = new FileStatsCollector(fields, options);
    const good = {
      rowCount: 2,
      ...statsOf([
        batch([
          { s: 'a', n: 1n },
          { s: 'b', n: null },
        ]),
      ]),
    };
    expect(c.fileStatsBlocker(good)).toBeNull();
    expect(c.fileStatsBlocker({ ...good, valueStatsCols: ['s', 'n'] })).toMatch(/cover the columns s, n, not s, n, c/);
    expect(c.fileStatsBlocker({ ...good, valueStats: { ...good.valueStats, nullCounts: null } })).toMatch(/no null count of column s/);
    const types = fields.map((f) => f.type);
    const noBounds = { ...good.valueStats, minValues: serializeBinaryRow(types, [null, null, null]) };
    expect(c.fileStatsBlocker({ ...good, valueStats: noBounds })).toMatch(/no bounds of column s/);
    // All null: no bounds is what the rows give too.
    const allNull = { rowCount: 1, ...statsOf([batch([{ s: null, n: null }])]) };
    expect(c.fileStatsBlocker(allNull)).toBeNull();
    expect(() => c.addFileStats({ ...good, valueStats: noBounds })).toThrow(/no bounds of column s/);
  });
});
