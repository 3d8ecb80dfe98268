/**
 * A service holds one Table object and calls `table.append` on it; another process appends to the
 * same table in between (test/workers/one-shot-append-worker.mjs, run from the built dist:
 * `npx turbo run build` first). The Table's remembered plan of sequence numbers must not outlive
 * that commit: its next append continues after the other process's sequence numbers, so that on
 * a primary-key table the latest write wins without re-sequencing at commit. On local disk and on
 * the real S3 server.
 */
import { runWorkerProcess } from './support/cli-process.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect } from 'vitest';
import type { FileIO, S3Options } from '@tidemark/storage';
import { serializeSchema, type DataFileMeta } from '@tidemark/format';
import { TablePaths, buildInitialSchema, openTable, type CommitResult, type Table } from '@tidemark/core';
import { packagesBuilt } from './support/built.js';
import { itOnDiskAndS3 } from './support/table-locations.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
const worker = join(repo, 'test', 'workers', 'one-shot-append-worker.mjs');
const built = packagesBuilt('one-shot appends across processes', 'core/dist/index.js');

type Row = { id: number; v: string };

async function otherProcessAppends(root: string, rows: Row[], s3?: S3Options): Promise<CommitResult> {
  return JSON.parse(await runWorkerProcess(worker, { root, rows, ...(s3 ? { s3 } : {}) }, { cwd: repo })) as CommitResult;
}

async function createTable(io: FileIO, root: string, primaryKey: boolean): Promise<void> {
  const schema = buildInitialSchema({
    fields: [
      { name: 'id', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    ...(primaryKey ? { primaryKeys: ['id'] } : {}),
    options: primaryKey ? { bucket: '1' } : { bucket: '1', 'bucket-key': 'id' },
  });
  await io.write(new TablePaths(root).schemaPath(0), serializeSchema(schema));
}

async function liveFiles(t: Table): Promise<DataFileMeta[]> {
  const plan = await t.newRead().plan();
  return plan.splits.flatMap((s) => s.files.map((f) => f.meta));
}

/** Appends from this process's Table and another process, alternating; checks sequence numbers. */
async function appendTable(io: FileIO, root: string, s3?: S3Options): Promise<void> {
  await createTable(io, root, false);
  const table = await openTable(root, { fileIO: io });
  let id = 0;
  const rows = (n: number, who: string): Row[] => Array.from({ length: n }, () => ({ id: ++id, v: `${who}${id}` }));
  await table.append(rows(2, 'a'));
  await table.append(rows(1, 'a')); // the Table's plan now stands past its own commit
  for (let round = 0; round < 2; round++) {
    expect((await otherProcessAppends(root, rows(3, 'b'), s3)).status).toBe('committed');
    const result = await table.append(rows(1, 'a'));
    expect(result.status).toBe('committed');
  }
  const files = (await liveFiles(table)).sort((x, y) => Number(x.minSequenceNumber - y.minSequenceNumber));
  expect(files).toHaveLength(6);
  // Each file's sequence numbers start right after the previous one's, the other process's included.
  for (let i = 1; i < files.length; i++) expect(files[i]!.minSequenceNumber).toBe(files[i - 1]!.maxSequenceNumber + 1n);
  expect(files.at(-1)!.maxSequenceNumber).toBe(BigInt(id - 1));
  expect((await table.newRead().toArrowTable()).numRows).toBe(id);
}

/** The same key written by this process's Table and another process in turn: the latest write wins. */
async function primaryKeyTable(io: FileIO, root: string, s3?: S3Options): Promise<void> {
  await createTable(io, root, true);
  const table = await openTable(root, { fileIO: io });
  const value = async (): Promise<string> => {
    const rows = await table.newRead().toArrowTable();
    expect(rows.numRows).toBe(1);
    return String(rows.getChild('v')!.get(0));
  };
  await table.append([{ id: 1, v: 'a0' }]);
  await table.append([{ id: 1, v: 'a1' }]);
  for (let round = 0; round < 2; round++) {
    expect((await otherProcessAppends(root, [{ id: 1, v: `b${round}` }], s3)).status).toBe('committed');
    expect(await value()).toBe(`b${round}`);
    const result = await table.append([{ id: 1, v: `a${round + 2}` }]);
    // Planned after the other process's commit: nothing to re-sequence at commit.
    expect(result).toMatchObject({ status: 'committed' });
    expect(result.status === 'committed' ? result.resequencedFiles : undefined).toBeUndefined();
    expect(await value()).toBe(`a${round + 2}`);
  }
}

describe.skipIf(!built).concurrent('one-shot table.append with another process committing in between', () => {
  for (const [what, scenario] of [
    ['append table', appendTable],
    ['primary-key table', primaryKeyTable],
  ] as const) {
    itOnDiskAndS3(
      'one-shot appends across processes on S3',
      what,
      { diskPrefix: 'tidemark-one-shot-', s3Label: 'one-shot-append' },
      scenario,
      { disk: 120_000, s3: 120_000 },
    );
  }
});
