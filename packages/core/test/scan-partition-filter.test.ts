/**
 * Planning filters partitions on the raw partition bytes of each manifest entry (once per distinct
 * partition) and skips manifests by their partition stats: the files it returns must be exactly
 * those of an unfiltered plan whose partition values satisfy the filter, for random partitions
 * with nulls, strings and decimals, and for bucket filters.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { decimalToPlainString, type DataType, type Decimal } from '@tidemark/format';
import { FileStoreScan, FileSystemCatalog } from '../src/index.js';
import { evaluate, type Predicate } from '../src/predicate.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';

const INT: DataType = { root: 'INT', nullable: true };
const STRING: DataType = { root: 'VARCHAR', nullable: true, length: 2147483647 };
const DECIMAL: DataType = { root: 'DECIMAL', nullable: true, precision: 10, scale: 2 };

const P1 = [1, -3, 70000, null];
const P2 = ['a', 'ü-long-partition-value', '', null];
const P3: (Decimal | null)[] = [{ unscaled: 1234n, scale: 2 }, { unscaled: -5n, scale: 2 }, null];

describe('partition filters on raw partition bytes', () => {
  it('plan exactly the files of an unfiltered plan whose partition passes the filter', async () => {
    const rng = seededRandom(42);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
    const store = new MemoryFileIO();
    const catalog = new FileSystemCatalog(`memory://scan-partition-filter-${process.pid}/wh`, { fileIO: store });
    await catalog.createTable('db.t', {
      fields: [
        { name: 'id', type: 'INT' },
        { name: 'p1', type: 'INT' },
        { name: 'p2', type: 'STRING' },
        { name: 'p3', type: 'DECIMAL(10, 2)' },
      ],
      partitionKeys: ['p1', 'p2', 'p3'],
      options: { 'write-only': 'true', bucket: '2', 'bucket-key': 'id' },
    });
    const t = await catalog.getTable('db.t');
    let id = 0;
    for (let commit = 0; commit < 12; commit++) {
      const rows = Array.from({ length: 1 + Math.floor(rng() * 6) }, () => ({ id: id++, p1: pick(P1), p2: pick(P2), p3: pick(P3) }));
      await t.append(rows);
    }
    const snapshot = (await t.snapshotManager.latest())!;
    const scan = new FileStoreScan(t.context, t.schemaManager);
    const all = await scan.plan(snapshot);
    const allFiles = all.splits.flatMap((s) => s.files.map((f) => ({ split: s, name: f.meta.fileName })));
    expect(new Set(all.splits.map((s) => JSON.stringify(s.partitionSpec))).size).toBeGreaterThan(8);
    const files = (plan: typeof all): string[] => plan.splits.flatMap((s) => s.files.map((f) => f.meta.fileName)).sort();

    const compare = (column: string, type: DataType, values: readonly unknown[]): Predicate => ({
      kind: 'compare',
      op: pick(['=', '!=', '<', '>=']),
      column,
      type,
      value: pick(values.filter((v) => v !== null)),
    });
    let nonEmpty = 0;
    for (let trial = 0; trial < 30; trial++) {
      const leaves: Predicate[] = [
        compare('p1', INT, P1),
        compare('p2', STRING, P2),
        compare('p3', DECIMAL, P3),
        { kind: 'isNull', column: pick(['p1', 'p2', 'p3']), type: INT, negated: rng() < 0.5 },
        { kind: 'in', column: 'p2', type: STRING, values: [pick(P2), pick(P2)], negated: rng() < 0.3 },
      ];
      const a = pick(leaves);
      const b = pick(leaves);
      const predicate: Predicate = rng() < 0.5 ? { kind: 'and', children: [a, b] } : { kind: 'or', children: [a, b] };
      const bucket = trial % 4 === 0 ? pick([0, 1]) : undefined;
      const got = files(await scan.plan(snapshot, { partitionPredicate: predicate, ...(bucket === undefined ? {} : { bucket }) }));
      const expected = allFiles
        .filter(({ split }) => {
          const row: Record<string, unknown> = {};
          ['p1', 'p2', 'p3'].forEach((k, i) => (row[k] = split.partitionValues[i]));
          return evaluate(predicate, row) === true && (bucket === undefined || split.bucket === bucket);
        })
        .map((f) => f.name)
        .sort();
      expect({ trial, predicate, got }).toEqual({ trial, predicate, got: expected });
      if (expected.length > 0 && expected.length < allFiles.length) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(10);

    // Partition specs (directory strings), including the default partition of nulls.
    for (const split of all.splits.slice(0, 6)) {
      const spec = split.partitionSpec;
      const got = files(await scan.plan(snapshot, { partitionSpec: spec }));
      const expected = allFiles
        .filter((f) => JSON.stringify(f.split.partitionSpec) === JSON.stringify(spec))
        .map((f) => f.name)
        .sort();
      expect(got).toEqual(expected);
    }
    // The decimal partition column shows in the spec as Java prints it.
    const withDecimal = all.splits.find((s) => s.partitionValues[2] !== null)!;
    expect(Object.values(withDecimal.partitionSpec)).toContain(decimalToPlainString(withDecimal.partitionValues[2] as Decimal));
  });
});
