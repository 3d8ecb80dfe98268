/**
 * The file-index model suite, one test file per backend (test/file-index-model*.test.ts). Reads
 * with Paimon's data-file index (bloom filters, `file-index.bloom-filter.columns`) against a
 * model: for several seeds, tables of each kind are written with the same random inserts, updates
 * and deletes (and the compactions they trigger) three times — without index, with indexes
 * embedded in the manifest, and with `.index` sidecars — and random `=` / `IN` filters (present
 * values, absent values, nulls, on every indexable type and on a DECIMAL column, which Paimon
 * cannot index) must return exactly the model's rows on all three. Afterwards values still in the
 * table are looked up (a false negative of a bloom filter would lose their rows); the indexed
 * tables must have skipped files for absent values (so the test fails if skipping is silently
 * off) and none for filters where skipping is unsafe, and `file-index.read.enabled = false`
 * skips none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alterTable, FileSystemCatalog, openTable, SchemaChanges, type Predicate, type Table, type TableSpec } from '@tidemark/core';
import type { DataField, DataType } from '@tidemark/format';
import { canonicalRows, type Canon, type CanonRow } from './arrow-canon.js';
import { storageBackends, type BackendWarehouse, type StorageBackend } from './backends.js';
import { seededRandom } from './seeded-random.mjs';

const COLUMNS: TableSpec['fields'] = [
  { name: 'k', type: 'INT NOT NULL' },
  { name: 'b', type: 'BIGINT' },
  { name: 's', type: 'STRING' },
  { name: 'd', type: 'DECIMAL(10, 2)' },
  { name: 'ts', type: 'TIMESTAMP(6)' },
  { name: 'dt', type: 'DATE' },
  { name: 'f', type: 'FLOAT' },
  { name: 'x', type: 'DOUBLE' },
  { name: 'bin', type: 'BYTES' },
];
/** Every column but DECIMAL (Paimon's bloom filter has no hash for it). */
const INDEXED = ['k', 'b', 's', 'ts', 'dt', 'f', 'x', 'bin'];
const FILTERED = [...INDEXED, 'd'];

type Variant = 'plain' | 'embedded' | 'sidecar';
const VARIANTS: Variant[] = ['plain', 'embedded', 'sidecar'];

interface Kind {
  readonly name: string;
  readonly primaryKey: boolean;
  readonly options: Record<string, string>;
  /** Columns whose filters may skip files (all for files read one by one; the key for merge-on-read). */
  readonly skippable: readonly string[];
}
const KINDS: Kind[] = [
  { name: 'append table with deletion vectors', primaryKey: false, options: { 'deletion-vectors.enabled': 'true' }, skippable: INDEXED },
  { name: 'primary-key table (merge on read)', primaryKey: true, options: { bucket: '2' }, skippable: ['k'] },
  {
    name: 'primary-key table with deletion vectors',
    primaryKey: true,
    options: { bucket: '2', 'deletion-vectors.enabled': 'true' },
    skippable: INDEXED,
  },
];

function optionsOf(variant: Variant): Record<string, string> {
  if (variant === 'plain') return {};
  const out: Record<string, string> = { 'file-index.bloom-filter.columns': INDEXED.join(',') };
  for (const c of INDEXED) out[`file-index.bloom-filter.${c}.items`] = '64';
  // 8 filters of 64 items at fpp 0.1 are ~440 bytes of bodies: above 500 B with the header.
  out['file-index.in-manifest-threshold'] = variant === 'embedded' ? '64 kb' : '1 b';
  return out;
}

/** The value pools: the writer draws from `present`; filters also from `absent` (never written). */
type Pool = { present: Canon[]; absent: Canon[] };

function pools(random: () => number): Record<string, Pool> & { readonly k: Pool; readonly s: Pool } {
  const pick = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
  void random;
  return {
    // Absent values lie between present ones, so that min/max statistics cannot rule files out.
    k: { present: pick(40, (i) => 2 * i), absent: [1, 37, 77] },
    b: { present: pick(9, (i) => BigInt(i - 4) * 8_589_934_592n + 3n), absent: [77n, -(2n ** 62n)] },
    s: { present: ['', 'a', 'bb', 'é', '\u{1F600}', 'long-' + 'x'.repeat(40)], absent: ['zz', 'A', 'bb '] },
    d: { present: ['0.00', '-1.05', '12345.67'], absent: ['0.01', '99.99'] },
    // TIMESTAMP(6): epoch microseconds.
    ts: { present: [0n, 1_700_000_000_123_456n, -86_400_000_001n], absent: [1_700_000_000_123_457n, 5n] },
    dt: { present: [0, 19_000, -1], absent: [19_001, 40_000] },
    f: { present: [0, -0, 1.5, -2.25, 1e10], absent: [3.5, -1.5] },
    x: { present: [0.1, -0, 1e-300, 42], absent: [0.2, -42] },
    bin: { present: [Uint8Array.of(), Uint8Array.of(0), Uint8Array.of(1, 2, 3)], absent: [Uint8Array.of(9, 9), Uint8Array.of(1, 2)] },
  };
}

function randomRow(random: () => number, pool: ReturnType<typeof pools>, k: number): CanonRow {
  const row: CanonRow = { k };
  for (const c of FILTERED) {
    if (c === 'k') continue;
    const values = pool[c]!.present;
    row[c] = random() < 0.15 ? null : values[Math.floor(random() * values.length)]!;
  }
  return row;
}

/** A filter literal in the read's value representation (what `newRead({ where })` compares). */
function internal(column: string, v: Canon): unknown {
  if (v === null) return null;
  if (column === 'd') {
    const [int, frac] = (v as string).split('.');
    return { unscaled: BigInt(int! + frac!), scale: 2 };
  }
  if (column === 'ts') {
    const micros = v as bigint;
    const millis = micros >= 0n ? micros / 1000n : -((-micros + 999n) / 1000n);
    return { millis: Number(millis), nanoOfMillis: Number(micros - millis * 1000n) * 1000 };
  }
  return v;
}

const key = (v: Canon): string =>
  v instanceof Uint8Array
    ? `bytes:${Buffer.from(v).toString('hex')}`
    : typeof v === 'bigint'
      ? `${v}n`
      : typeof v === 'number'
        ? `num:${v === 0 ? 0 : v}`
        : JSON.stringify(v);
const rowKey = (r: CanonRow): string => COLUMNS.map((c) => key(r[c.name] ?? null)).join('|');

/** Model rows a filter `column IN values` keeps (SQL: nulls never match; -0 = 0). */
function modelSelect(rows: readonly CanonRow[], column: string, values: readonly Canon[]): string[] {
  const wanted = new Set(values.filter((v) => v !== null).map(key));
  return rows
    .filter((r) => r[column] !== null && r[column] !== undefined && wanted.has(key(r[column]!)))
    .map(rowKey)
    .sort();
}

function predicateOf(table: Table, column: string, values: readonly Canon[], random: () => number): Predicate {
  const type: DataType = table.schema().fields.find((f: DataField) => f.name === column)!.type;
  const literals = values.map((v) => internal(column, v));
  if (literals.length === 1 && random() < 0.5) return { kind: 'compare', op: '=', column, type, value: literals[0] };
  return { kind: 'in', column, type, values: literals, negated: false };
}

async function readRows(table: Table, where: Predicate): Promise<{ rows: string[]; skipped: number }> {
  const read = table.newRead({ where });
  const out = canonicalRows(await read.toArrowTable(), table.schema().fields)
    .map(rowKey)
    .sort();
  return { rows: out, skipped: read.fileIndexStats.filesSkipped };
}

/** The model suite on one backend (one test file per backend, so that vitest runs them side by side). */
export function fileIndexModelSuite(backendName: StorageBackend['name']): void {
  const backend = storageBackends('file index model').find((b) => b.name === backendName)!;
  describe(`file index against a model on ${backend.name}`, () => {
    let wh: BackendWarehouse;
    beforeAll(async () => {
      if (backend.available) wh = await backend.open();
    });
    afterAll(async () => {
      await wh?.cleanup();
    });

    for (const kind of KINDS) {
      for (const seed of [1, 2, 3]) {
        it.skipIf(!backend.available)(
          `${kind.name}, seed ${seed}: every filter returns the model's rows; absent values skip files`,
          async () => {
            const random = seededRandom(seed * 7919 + kind.name.length);
            const pool = pools(random);
            const catalog = new FileSystemCatalog(
              `${wh.root}/${kind.primaryKey ? 'pk' : 'ap'}-${kind.options['deletion-vectors.enabled'] ?? 'n'}-${seed}`,
              {
                fileIO: wh.io,
              },
            );
            const tables = new Map<Variant, Table>();
            for (const variant of VARIANTS) {
              await catalog.createTable(`db.${variant}`, {
                fields: COLUMNS,
                ...(kind.primaryKey ? { primaryKeys: ['k'] } : {}),
                // Compaction every few commits, so that compaction output carries indexes too.
                options: {
                  ...kind.options,
                  'num-sorted-run.compaction-trigger': '3',
                  'compaction.min.file-num': '3',
                  ...optionsOf(variant),
                },
              });
              tables.set(variant, await openTable(catalog.tableLocation(`db.${variant}`), { fileIO: wh.io }));
            }
            let model: CanonRow[] = [];
            const skipped = new Map<Variant, number>(VARIANTS.map((v) => [v, 0]));
            const checkFilters = async (count: number): Promise<void> => {
              for (let q = 0; q < count; q++) {
                const column = FILTERED[Math.floor(random() * FILTERED.length)]!;
                const p = pool[column]!;
                const n = 1 + Math.floor(random() * 3);
                const values = Array.from({ length: n }, () => {
                  const r = random();
                  return r < 0.1
                    ? null
                    : r < 0.55
                      ? p.absent[Math.floor(random() * p.absent.length)]!
                      : p.present[Math.floor(random() * p.present.length)]!;
                });
                const expected = modelSelect(model, column, values);
                const allAbsent = values.every((v) => v === null || p.absent.includes(v));
                for (const [variant, table] of tables) {
                  const got = await readRows(table, predicateOf(table, column, values, random));
                  expect(got.rows, `${variant}: ${column} IN (${values.map(key).join(', ')})`).toEqual(expected);
                  if (variant === 'plain' || !kind.skippable.includes(column)) {
                    expect(got.skipped, `${variant}: ${column} must not skip files`).toBe(0);
                  } else if (allAbsent) skipped.set(variant, skipped.get(variant)! + got.skipped);
                }
              }
            };
            for (let round = 0; round < 6; round++) {
              const op = round < 2 ? 0 : random();
              if (op < 0.55) {
                const rows = Array.from({ length: 12 + Math.floor(random() * 12) }, () =>
                  randomRow(random, pool, 2 * Math.floor(random() * 40)),
                );
                for (const t of tables.values()) await t.append(rows);
                if (kind.primaryKey) {
                  const byKey = new Map(model.map((r) => [r.k as number, r]));
                  for (const r of rows) byKey.set(r.k as number, r);
                  model = [...byKey.values()];
                } else model.push(...rows);
              } else if (op < 0.8) {
                const k = model.length === 0 ? 0 : (model[Math.floor(random() * model.length)]!.k as number);
                for (const t of tables.values()) await t.delete({ where: `k = ${k}` });
                model = model.filter((r) => r.k !== k);
              } else {
                const k = model.length === 0 ? 0 : (model[Math.floor(random() * model.length)]!.k as number);
                const s = pool.s.present[Math.floor(random() * pool.s.present.length)] as string;
                for (const t of tables.values()) await t.update({ where: `k = ${k}`, set: { s } });
                model = model.map((r) => (r.k === k ? { ...r, s } : r));
              }
              await checkFilters(4);
            }
            // No false negatives: values still in the table find exactly their rows.
            for (const column of INDEXED) {
              // Some keys and a few values of the other columns (each costs three table reads); the random
              // filters above probe present values too.
              const distinct = [...new Map(model.filter((r) => r[column] !== null).map((r) => [key(r[column]!), r[column]!])).values()];
              const present = distinct.slice(0, column === 'k' ? 12 : 3);
              for (const v of present) {
                const expected = modelSelect(model, column, [v]);
                for (const [variant, table] of tables) {
                  expect(
                    (await readRows(table, predicateOf(table, column, [v], random))).rows,
                    `${variant}: ${column} = ${key(v)}`,
                  ).toEqual(expected);
                }
              }
            }
            // Absent values: the indexes ruled files out (else skipping is silently off).
            await checkFilters(0);
            for (const variant of ['embedded', 'sidecar'] as const) {
              const table = tables.get(variant)!;
              const absent = await readRows(table, predicateOf(table, 'k', pool.k.absent, random));
              expect(absent.rows).toEqual([]);
              expect(absent.skipped, `${variant}: files skipped for absent keys`).toBeGreaterThan(0);
              expect(skipped.get(variant)! + absent.skipped).toBeGreaterThan(0);
            }
            // file-index.read.enabled = false: the same rows, no file skipped.
            const sidecar = tables.get('sidecar')!;
            await alterTable(sidecar.fileIO, sidecar.paths, [SchemaChanges.setOption('file-index.read.enabled', 'false')]);
            const off = await openTable(catalog.tableLocation('db.sidecar'), { fileIO: wh.io });
            expect(await readRows(off, predicateOf(off, 'k', pool.k.absent, random))).toEqual({ rows: [], skipped: 0 });
          },
        );
      }
    }
  });
}
