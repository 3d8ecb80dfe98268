/**
 * Test tables for the maintenance jobs, built with the real write and commit path on local disk.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileIO } from '@tidemark/storage';
import { LocalFileIO } from '@tidemark/storage';
import type { Snapshot, TableSchema } from '@tidemark/format';
import {
  FileStoreCommit,
  FileSystemCatalog,
  SnapshotManager,
  TablePaths,
  liveEntries,
  newTableWrite,
  openTable,
  type CommitMessage,
  type Table,
} from '@tidemark/core';

export interface TestTable {
  readonly io: FileIO;
  /** Same as `io` (what the maintenance jobs take). */
  readonly fileIO: FileIO;
  readonly location: string;
  readonly paths: TablePaths;
  readonly schema: TableSchema;
  readonly commit: FileStoreCommit;
  open(): Promise<Table>;
  /** Appends rows `{ id, p }` as one commit. */
  append(ids: readonly number[], p?: string): Promise<number>;
  /** Replaces the content of partition `p` (or the whole table) with `ids`. */
  overwrite(ids: readonly number[], p?: string): Promise<number>;
}

let n = 0;

export async function createTestTable(options: { partitioned?: boolean; io?: FileIO; warehouse?: string } = {}): Promise<TestTable> {
  const io = options.io ?? new LocalFileIO();
  const warehouse = options.warehouse ?? (await mkdtemp(join(tmpdir(), 'tidemark-maint-')));
  const catalog = new FileSystemCatalog(warehouse, { fileIO: io });
  const name = `db.t${++n}`;
  const schema = await catalog.createTable(name, {
    fields: [
      { name: 'id', type: 'INT' },
      { name: 'p', type: 'STRING' },
    ],
    ...(options.partitioned ? { partitionKeys: ['p'] } : {}),
  });
  const location = catalog.tableLocation(name);
  const paths = new TablePaths(location);
  const commit = new FileStoreCommit(io, paths, schema, { logger: { warn: () => {} } });
  const user = `test-${process.pid}-${n}`;
  let identifier = 0n;
  const rows = (ids: readonly number[], p: string) => ids.map((id) => ({ id, p }));
  // The writer is closed only after the commit: closing clears its in-flight record, which
  // protects its data files from a concurrent orphan cleanup until the snapshot exists.
  const write = async <T>(ids: readonly number[], p: string, commitIt: (messages: CommitMessage[]) => Promise<T>): Promise<T> => {
    const w = newTableWrite(io, location, schema);
    try {
      await w.write(rows(ids, p));
      return await commitIt(await w.prepareCommit());
    } finally {
      await w.close();
    }
  };
  return {
    io,
    fileIO: io,
    location,
    paths,
    schema,
    commit,
    open: () => openTable(location, { fileIO: io }),
    async append(ids, p = 'a') {
      const r = await write(ids, p, (messages) => commit.commit({ identifier: ++identifier, messages }, { commitUser: user }));
      if (r.status !== 'committed') throw new Error(`append not committed: ${r.status}`);
      return r.snapshotId;
    },
    async overwrite(ids, p = 'a') {
      const r = await write(ids, p, (messages) =>
        commit.overwrite(
          { identifier: ++identifier, messages },
          { commitUser: user, ...(options.partitioned ? { partition: { p } } : {}) },
        ),
      );
      if (r.status !== 'committed') throw new Error(`overwrite not committed: ${r.status}`);
      return r.snapshotId;
    },
  };
}

/** Sorted data file locations live in `snapshot`. */
export async function liveFiles(
  t: Pick<TestTable, 'io' | 'paths'>,
  snapshot: Snapshot,
  locate: (e: import('@tidemark/format').ManifestEntry) => string,
): Promise<string[]> {
  const live = await liveEntries(t.io, t.paths, snapshot);
  return [...live.values()].map(locate).sort();
}

/** Sorted ids read from a snapshot / tag. */
export async function readIds(table: Table, at: { snapshotId?: number; tag?: string }): Promise<number[]> {
  const t = await table.newRead(at).toArrowTable();
  const col = t.getChild('id')!;
  const out: number[] = [];
  for (let i = 0; i < t.numRows; i++) out.push(col.get(i) as number);
  return out.sort((a, b) => a - b);
}

export async function snapshotIds(t: Pick<TestTable, 'io' | 'paths'>): Promise<number[]> {
  return new SnapshotManager(t.io, t.paths).sortedIds();
}

/** Every file under the table directory. */
export async function allFiles(io: FileIO, location: string): Promise<string[]> {
  const out: string[] = [];
  for await (const st of io.list(location)) out.push(st.path);
  return out.sort();
}

/**
 * Files referenced by the given snapshots/tags (manifest lists, manifests, data files) that do not
 * exist. Empty for a consistent table.
 */
export async function missingReferences(
  t: Pick<TestTable, 'io' | 'paths'>,
  snaps: readonly Snapshot[],
  locate: (e: import('@tidemark/format').ManifestEntry) => string,
): Promise<string[]> {
  const { readManifestList } = await import('@tidemark/format');
  const missing: string[] = [];
  for (const s of snaps) {
    for (const list of [s.baseManifestList, s.deltaManifestList]) {
      const p = t.paths.manifestPath(list);
      if (!(await t.io.exists(p))) {
        missing.push(p);
        continue;
      }
      for (const m of await readManifestList(t.io, p)) {
        const mp = t.paths.manifestPath(m.fileName);
        if (!(await t.io.exists(mp))) missing.push(mp);
      }
    }
    if (missing.length > 0) continue;
    for (const f of await liveFiles(t, s, locate)) if (!(await t.io.exists(f))) missing.push(f);
  }
  return [...new Set(missing)].sort();
}
