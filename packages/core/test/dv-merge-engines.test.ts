/**
 * Deletion-vector tables whose merge engine builds on older values (partial-update, aggregation,
 * deduplicate with `sequence.field`): batch reads take each key's one live record of levels ≥ 1
 * as it is, so the compaction that moves a key's new level-0 records up and marks its older record
 * deleted must merge that older record into the new one (as Java's lookup compaction does).
 * Each case is the smallest write sequence that read a column as null (or the wrong value) when
 * the compaction kept only the new records: a second write whose level-0 file is smaller than the
 * top-level run is compacted alone (the old record is looked up above it); with a small
 * `target-file-size`, a level-0 file large enough to be moved up a level instead of rewritten.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, type RowObject, type Table, type TableSpec } from '../src/index.js';
import { seededRandom } from './helpers.js';

let n = 0;
async function dvTable(spec: Omit<TableSpec, 'primaryKeys'>): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://dv-merge-engines-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    ...spec,
    primaryKeys: ['k'],
    options: { bucket: '1', 'deletion-vectors.enabled': 'true', ...spec.options },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

async function write(table: Table, rows: RowObject[]): Promise<void> {
  const r = await table.append(rows, { rowKindField: 'op' });
  expect(r.status).toBe('committed');
}

async function rows(table: Table): Promise<Record<string, unknown>[]> {
  const t = await table.newRead().toArrowTable();
  return t
    .toArray()
    .map((r) => r.toJSON() as Record<string, unknown>)
    .sort((a, b) => (a.k as number) - (b.k as number));
}

/** Level-0 files of the latest snapshot (a deletion-vector table's writer leaves none). */
async function levelZeroFiles(table: Table): Promise<number> {
  return (await table.newRead().plan()).files().filter((f) => f.level === 0).length;
}

/** Makes the first write's file larger than the second's, so that the second is compacted alone. */
const filler = 'f'.repeat(300);

describe('deletion vectors with merge engines that build on older values', () => {
  it('partial-update: a write of other columns keeps the columns written before', async () => {
    const t = await dvTable({
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'a', type: 'STRING' },
        { name: 'b', type: 'BIGINT' },
      ],
      options: { 'merge-engine': 'partial-update' },
    });
    await write(t, [
      { k: 1, a: filler, b: null },
      { k: 2, a: 'two', b: 2n },
    ]);
    await write(t, [{ k: 1, a: null, b: 5n }]);
    expect(await rows(t)).toEqual([
      { k: 1, a: filler, b: 5n },
      { k: 2, a: 'two', b: 2n },
    ]);
    await write(t, [{ k: 1, a: 'a3', b: null }]);
    expect(await rows(t)).toEqual([
      { k: 1, a: 'a3', b: 5n },
      { k: 2, a: 'two', b: 2n },
    ]);
    expect(await levelZeroFiles(t)).toBe(0);
  });

  it('aggregation: sums and retractions build on the stored value', async () => {
    const t = await dvTable({
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'n', type: 'BIGINT' },
        { name: 's', type: 'STRING' },
      ],
      options: { 'merge-engine': 'aggregation', 'fields.n.aggregate-function': 'sum' },
    });
    await write(t, [{ k: 1, n: 10n, s: filler, op: '+I' }]);
    await write(t, [{ k: 1, n: 5n, s: null, op: '+I' }]);
    expect(await rows(t)).toEqual([{ k: 1, n: 15n, s: filler }]);
    await write(t, [{ k: 1, n: 3n, s: null, op: '-U' }]);
    expect(await rows(t)).toEqual([{ k: 1, n: 12n, s: filler }]);
  });

  it('partial-update with a sequence group: an older group sequence leaves the group as it was', async () => {
    const t = await dvTable({
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'a', type: 'STRING' },
        { name: 'g', type: 'BIGINT' },
        { name: 'b', type: 'STRING' },
      ],
      options: { 'merge-engine': 'partial-update', 'fields.g.sequence-group': 'a' },
    });
    await write(t, [{ k: 1, a: 'a5', g: 5n, b: filler }]);
    await write(t, [{ k: 1, a: 'a3', g: 3n, b: null }]);
    expect(await rows(t)).toEqual([{ k: 1, a: 'a5', g: 5n, b: filler }]);
    // A newer group sequence takes the group's values, nulls included.
    await write(t, [{ k: 1, a: null, g: 7n, b: null }]);
    expect(await rows(t)).toEqual([{ k: 1, a: null, g: 7n, b: filler }]);
  });

  it('deduplicate with sequence.field: a record or delete with an older sequence value does not win', async () => {
    const t = await dvTable({
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'v', type: 'STRING' },
        { name: 'ts', type: 'BIGINT' },
      ],
      options: { 'sequence.field': 'ts' },
    });
    await write(t, [
      { k: 1, v: filler, ts: 10n, op: '+I' },
      { k: 2, v: 'two', ts: 1n, op: '+I' },
    ]);
    await write(t, [{ k: 1, v: 'older', ts: 5n, op: '+I' }]);
    expect(await rows(t)).toEqual([
      { k: 1, v: filler, ts: 10n },
      { k: 2, v: 'two', ts: 1n },
    ]);
    await write(t, [{ k: 1, v: null, ts: 5n, op: '-D' }]);
    expect(await rows(t)).toEqual([
      { k: 1, v: filler, ts: 10n },
      { k: 2, v: 'two', ts: 1n },
    ]);
    await write(t, [{ k: 1, v: null, ts: 11n, op: '-D' }]);
    expect(await rows(t)).toEqual([{ k: 2, v: 'two', ts: 1n }]);
  });

  it('a level-0 file large enough to be moved up a level is merged with the records it replaces', async () => {
    // Files of at least 70 % of target-file-size are moved up rather than rewritten.
    const t = await dvTable({
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'a', type: 'STRING' },
        { name: 'b', type: 'STRING' },
      ],
      options: { 'merge-engine': 'partial-update', 'target-file-size': '16 kb' },
    });
    const rand = seededRandom(3);
    // Printable characters drawn at random: barely compressible, so file sizes follow row counts.
    const noise = (len: number): string => Array.from({ length: len }, () => String.fromCharCode(33 + rand(90))).join('');
    const model = new Map<number, { k: number; a: string | null; b: string | null }>();
    const first = Array.from({ length: 400 }, (_, k) => ({ k, a: noise(64), b: null }));
    await write(t, first);
    for (const r of first) model.set(r.k, r);
    const second = Array.from({ length: 150 }, (_, i) => ({ k: i * 2, a: null, b: noise(100) }));
    await write(t, second);
    for (const r of second) model.set(r.k, { ...model.get(r.k)!, b: r.b });
    expect(await rows(t)).toEqual([...model.values()]);
    expect(await levelZeroFiles(t)).toBe(0);
  });
});
