import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LocalFileIO } from '@tidemark/storage';
import { SnapshotManager } from '../src/snapshot-manager.js';
import { SchemaManager } from '../src/schema-manager.js';
import { TagManager } from '../src/tag-manager.js';
import { TablePaths } from '../src/table-paths.js';
import { resolveSnapshot } from '../src/time-travel.js';
import { SchemaNotFoundError, SnapshotNotFoundError, TagNotFoundError, TimeTravelError } from '../src/errors.js';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const fixtures = resolve(repoRoot, '../shared/fixtures/paimon');
const present = existsSync(fixtures);
if (!present) console.warn(`[skip] Paimon fixtures not found at ${fixtures}; fixture snapshot tests are skipped`);

const tables = {
  pkMor: join(fixtures, 'pk-mor/default.db/pk_table_scan_and_read_mor'),
  pkDv: join(fixtures, 'pk-dv/default.db/pk_table_scan_and_read_dv'),
  appendEvo: join(fixtures, 'append-schema-evolution/default.db/append_table_with_alter_table'),
};

/** timeMillis of each snapshot file, read with a regex (independently of the JSON parser under test). */
function rawTimes(table: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync(join(table, 'snapshot'))) {
    const m = /^snapshot-(\d+)$/.exec(name);
    if (!m) continue;
    const t = /"timeMillis"\s*:\s*(\d+)/.exec(readFileSync(join(table, 'snapshot', name), 'utf8'));
    out.set(Number(m[1]), Number(t![1]));
  }
  return out;
}

function open(table: string) {
  const io = new LocalFileIO();
  const paths = new TablePaths(table);
  return { snapshots: new SnapshotManager(io, paths), tags: new TagManager(io, paths), schemas: new SchemaManager(io, paths) };
}

describe.skipIf(!present)('snapshots of Java-written fixture tables', () => {
  it('pk-mor: latest 5, earliest 1, kinds and record counts from the README', async () => {
    const t = open(tables.pkMor);
    expect(await t.snapshots.latestId()).toBe(5);
    expect(await t.snapshots.earliestId()).toBe(1);
    const kinds: string[] = [];
    const totals: number[] = [];
    const deltas: number[] = [];
    for await (const s of t.snapshots.iterateForward()) {
      kinds.push(s.commitKind);
      totals.push(s.totalRecordCount!);
      deltas.push(s.deltaRecordCount!);
    }
    expect(kinds).toEqual(['APPEND', 'APPEND', 'COMPACT', 'APPEND', 'APPEND']);
    expect(totals).toEqual([9, 11, 10, 13, 16]);
    expect(deltas).toEqual([9, 2, -1, 3, 3]);
  });

  it('pk-dv: latest 6; append-schema-evolution: latest 2', async () => {
    expect(await open(tables.pkDv).snapshots.latestId()).toBe(6);
    expect(await open(tables.appendEvo).snapshots.latestId()).toBe(2);
    const kinds: string[] = [];
    for await (const s of open(tables.pkDv).snapshots.iterateBackward()) kinds.push(s.commitKind);
    expect(kinds).toEqual(['APPEND', 'APPEND', 'COMPACT', 'APPEND', 'COMPACT', 'APPEND']);
  });

  it('by timestamp: exact hits, between commits, before the first', async () => {
    const t = open(tables.pkMor);
    const times = rawTimes(tables.pkMor);
    for (const [id, time] of times) {
      expect((await t.snapshots.snapshotAtOrBefore(time)).id).toBe(id);
      // one millisecond earlier belongs to the previous snapshot (times are strictly increasing here)
      if (id > 1) expect((await t.snapshots.snapshotAtOrBefore(time - 1)).id).toBe(id - 1);
    }
    expect((await resolveSnapshot(t, { timestampMs: times.get(5)! + 86_400_000 }))?.id).toBe(5);
    await expect(t.snapshots.snapshotAtOrBefore(times.get(1)! - 1)).rejects.toBeInstanceOf(TimeTravelError);
  });

  it('by id and unknown ids', async () => {
    const t = open(tables.pkMor);
    expect((await resolveSnapshot(t, { snapshotId: 3 }))?.commitKind).toBe('COMPACT');
    await expect(resolveSnapshot(t, { snapshotId: 7 })).rejects.toThrow(new SnapshotNotFoundError(7, 1, 5).message);
    expect(new SnapshotNotFoundError(7, 1, 5).message).toBe('snapshot 7 does not exist; earliest is 1, latest is 5');
  });

  it('schemas: both versions of the evolved table', async () => {
    const t = open(tables.appendEvo);
    const ids = await t.schemas.listIds();
    expect(ids).toEqual([0, 1]);
    const latest = await t.schemas.latest();
    expect(latest.id).toBe(1);
    expect(latest.fields.map((f) => `${f.id}:${f.name}`)).toEqual(['0:key0', '1:key1', '6:k', '3:c', '7:d', '5:a', '8:e']);
    const s0 = await t.schemas.schema(0);
    expect(s0.fields.map((f) => f.name)).toEqual(['key0', 'key1', 'a', 'b', 'c', 'd', 'k']);
    expect(await t.schemas.schema(0)).toBe(s0); // cached
    const err = await t.schemas.schema(7).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaNotFoundError);
    expect((err as Error).message).toContain(join(tables.appendEvo, 'schema', 'schema-7'));
  });

  it('tags: none exist, so an unknown tag says so', async () => {
    const t = open(tables.pkMor);
    expect(await t.tags.names()).toEqual([]);
    const err = await resolveSnapshot(t, { tag: 'nightly' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TagNotFoundError);
    expect((err as Error).message).toBe("tag 'nightly' does not exist; the table has no tags");
  });
});
