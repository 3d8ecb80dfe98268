/**
 * Branches of the Java-written primary-key table `pk-mor`, on local disk and on the real S3
 * server. No fixture has a branch (Java's layout is taken from Paimon's source:
 * `FileSystemBranchManager`, `BranchManager.branchPath`): a branch made from a tag holds
 * `branch/branch-<name>/` with the tag file, the tagged snapshot's file and the schemas up to the
 * snapshot's, copied byte for byte, and no hint files. The Java-written snapshot read through the
 * branch gives the rows Paimon's own test expects at that snapshot; the branch then takes writes and
 * main is fast-forwarded to it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTable, type Table } from '@tidemark/core';
import { storageBackends, type BackendWarehouse } from './support/backends.js';
import { fixturesDir } from './support/fixtures.js';
import { openFixtureCopy } from './support/fixture-copy.js';
import { PK_MOR_LATEST, PK_MOR_SNAPSHOT_2, type PkMorRow } from './support/fixture-rows.js';

const TABLE = 'default.db/pk_table_scan_and_read_mor';

const keyOf = (r: PkMorRow): string => `${r[0]}|${r[1]}|${r[2]}`;

async function rows(table: Table, options: { snapshotId?: number; tag?: string } = {}): Promise<PkMorRow[]> {
  const t = await table.newRead(options).toArrowTable();
  return t
    .toArray()
    .map((r) => [r.f0, r.f1, r.f2, r.f3] as PkMorRow)
    .sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
}

/** Paimon's expected rows at snapshot 2 of pk-mor (fixture README, test `…BatchScanSnapshot2`). */
const AT_SNAPSHOT_2 = [...PK_MOR_SNAPSHOT_2].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));

const fixtures = fixturesDir('branches of Java tables');

describe.each(storageBackends('branches java tables'))('a branch of the Java pk-mor table on $name', (backend) => {
  let warehouse: BackendWarehouse;
  let table: Table;
  const enabled = backend.available && fixtures !== null;
  const source = fixtures === null ? '' : join(fixtures, 'pk-mor', TABLE);

  beforeAll(async () => {
    if (!enabled) return;
    ({ warehouse, table } = await openFixtureCopy(backend, source, 'pk-mor'));
  }, 60_000);

  afterAll(async () => {
    if (enabled) await warehouse.cleanup();
  });

  it.skipIf(!enabled)('copies the Java files into branch/branch-<name>/ byte for byte, reads, writes and fast-forwards', async () => {
    await table.createTag('s2', { snapshotId: 2 });
    const created = await table.branches().create('fix', { tag: 's2' });
    expect(created).toEqual({ name: 'fix', fromTag: 's2', snapshotId: 2, schemaIds: [0] });

    const root = `${table.location}/branch/branch-fix`;
    const files: string[] = [];
    for await (const st of warehouse.io.list(root)) files.push(st.path.slice(root.length + 1));
    expect(files.sort()).toEqual(['schema/schema-0', 'snapshot/snapshot-2', 'tag/tag-s2']);
    for (const f of ['schema/schema-0', 'snapshot/snapshot-2']) {
      expect(Buffer.from(await warehouse.io.read(`${root}/${f}`)).equals(await readFile(join(source, f))), f).toBe(true);
    }
    expect(
      Buffer.from(await warehouse.io.read(`${root}/tag/tag-s2`)).equals(Buffer.from(await warehouse.io.read(table.paths.tagPath('s2')))),
    ).toBe(true);

    const fix = await openTable(table.location, { fileIO: warehouse.io, branch: 'fix' });
    expect(await rows(fix)).toEqual(AT_SNAPSHOT_2);
    expect(await rows(table)).toEqual([...PK_MOR_LATEST].sort((a, b) => keyOf(a).localeCompare(keyOf(b))));

    // The branch continues Java's history from snapshot 2; main still reads its own.
    await fix.append([{ f0: 'Alex', f1: 10, f2: 0, f3: 99.5 }]);
    expect(await fix.snapshotManager.latestId()).toBe(3);
    // The snapshot written on the branch is laid out as the Java snapshot it follows (same fields in
    // the same order, same value types, same pretty printing), except for the three members only
    // Paimon <= 1.3 writes when empty and 1.4 omits (docs/format.md: the 1.4 layout is written).
    const only13 = ['changelogManifestList', 'logOffsets', 'changelogRecordCount'];
    const layout = (text: string): string =>
      text
        .split('\n')
        .filter((line) => !only13.some((k) => line.startsWith(`  "${k}" : `)))
        .join('\n')
        .replace(/" : (?:"[^"]*"|[^,\n]+)(,?)$/gm, '" : <value>$1');
    const javaText = await readFile(join(source, 'snapshot/snapshot-2'), 'utf8');
    const oursText = Buffer.from(await warehouse.io.read(`${root}/snapshot/snapshot-3`)).toString('utf8');
    expect(layout(oursText)).toBe(layout(javaText));
    const java = JSON.parse(javaText) as Record<string, unknown>;
    const ours = JSON.parse(oursText) as Record<string, unknown>;
    for (const k of Object.keys(java).filter((k) => !only13.includes(k)))
      expect([k, typeof ours[k], ours[k] === null]).toEqual([k, typeof java[k], java[k] === null]);
    expect(ours).toMatchObject({
      version: 3,
      id: 3,
      schemaId: 0,
      commitKind: 'APPEND',
      totalRecordCount: (java['totalRecordCount'] as number) + 1,
      deltaRecordCount: 1,
    });
    const fixed = AT_SNAPSHOT_2.map((r) => (r[0] === 'Alex' ? (['Alex', 10, 0, 99.5] as PkMorRow) : r));
    expect(await rows(fix)).toEqual(fixed);
    expect(await rows(table, { snapshotId: 5 })).toEqual([...PK_MOR_LATEST].sort((a, b) => keyOf(a).localeCompare(keyOf(b))));

    const ff = await table.branches().fastForward('fix');
    expect(ff).toMatchObject({ fromSnapshotId: 2, removedSnapshots: [5, 4, 3, 2], copiedSnapshots: [2, 3], latestSnapshotId: 3 });
    const main = await openTable(table.location, { fileIO: warehouse.io });
    expect(await rows(main)).toEqual(fixed);
    // Java's snapshot 1 stays main's, and still reads.
    expect(await rows(main, { snapshotId: 1 })).toHaveLength(9);
  });
});
