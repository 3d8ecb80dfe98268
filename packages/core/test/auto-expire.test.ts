import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { readManifestList, serializeSchema } from '@tidemark/format';
import { FileSystemCatalog, InvalidOptionError, SnapshotManager, Table, type TableSpec } from '../src/index.js';

let n = 0;
const SPEC: TableSpec = {
  fields: [
    { name: 'id', type: 'INT' },
    { name: 'v', type: 'STRING' },
  ],
};

async function createTable(options: Record<string, string>, io: FileIO = new MemoryFileIO()): Promise<Table> {
  const catalog = new FileSystemCatalog(`memory://auto-expire-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', { ...SPEC, options });
  return catalog.getTable('db.t');
}

const rows = (ids: readonly number[]): Array<{ id: number; v: string }> => ids.map((id) => ({ id, v: `v${id}` }));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function snapshotIds(t: Table): Promise<number[]> {
  const ids: number[] = [];
  for await (const st of t.fileIO.list(`${t.location}/snapshot`, { recursive: false })) {
    const m = /\/snapshot-(\d+)$/.exec(st.path);
    if (m) ids.push(Number(m[1]));
  }
  return ids.sort((a, b) => a - b);
}

async function earliestHint(t: Table): Promise<string | null> {
  if (!(await t.fileIO.exists(t.paths.earliestHint))) return null;
  return new TextDecoder().decode(await t.fileIO.read(t.paths.earliestHint)).trim();
}

async function readIds(t: Table, snapshotId: number): Promise<number[]> {
  const table = await t.newRead({ snapshotId }).toArrowTable();
  const col = table.getChild('id')!;
  const out: number[] = [];
  for (let i = 0; i < col.length; i++) out.push(col.get(i) as number);
  return out.sort((a, b) => a - b);
}

async function filesUnder(t: Table): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const st of t.fileIO.list(t.location)) out.add(st.path);
  return out;
}

/** Every file a snapshot needs: its JSON, manifest lists, manifests and live data files. */
async function referencedBy(t: Table, id: number): Promise<string[]> {
  const s = await t.snapshotManager.snapshot(id);
  const out = [t.paths.snapshotPath(id)];
  for (const list of [s.baseManifestList, s.deltaManifestList]) {
    out.push(t.paths.manifestPath(list));
    for (const m of await readManifestList(t.fileIO, t.paths.manifestPath(list))) out.push(t.paths.manifestPath(m.fileName));
  }
  const plan = await t.newRead({ snapshotId: id }).plan();
  for (const split of plan.splits) for (const f of split.files) out.push(f.path);
  return out;
}

/** Wraps `inner` so that deleting snapshot or manifest files throws while `armed()`. */
function faultyDeletes(inner: FileIO, armed: () => boolean): FileIO {
  const expirable = (p: string): boolean => /\/(snapshot|manifest)\//.test(p);
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'delete') {
        return async (p: string): Promise<void> => {
          if (armed() && expirable(p)) throw new Error(`injected delete failure: ${p}`);
          return target.delete(p);
        };
      }
      if (prop === 'deleteMany') {
        return async (paths: Iterable<string> | AsyncIterable<string>): Promise<number> => {
          const list: string[] = [];
          for await (const p of paths) list.push(p);
          if (armed() && list.some(expirable)) throw new Error(`injected delete failure: ${list[0]}`);
          return target.deleteMany(list);
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

const RETAIN_3 = { 'snapshot.num-retained.min': '3', 'snapshot.time-retained': '1 ms' };

afterEach(() => {
  vi.restoreAllMocks();
});

describe('automatic snapshot expiration after commits', () => {
  it('10 appends keep exactly the retained snapshots, move EARLIEST, delete only expired files', async () => {
    const t = await createTable(RETAIN_3);
    const written: number[] = [];
    for (let i = 1; i <= 10; i++) {
      // The successor of an expiring snapshot must be older than 1 ms: space the commits out.
      await sleep(5);
      const r = await t.append(rows([i * 10, i * 10 + 1]));
      expect(r.status).toBe('committed');
      written.push(i * 10, i * 10 + 1);
      const expected = Array.from({ length: Math.min(i, 3) }, (_, k) => Math.max(1, i - 2) + k);
      expect(await snapshotIds(t), `after append ${i}`).toEqual(expected);
      if (i > 3) expect(await earliestHint(t), `after append ${i}`).toBe(String(i - 2));
    }
    expect(await new SnapshotManager(t.fileIO, t.paths).earliestId()).toBe(8);
    expect(await t.snapshotManager.latestId()).toBe(10);

    // Every retained snapshot reads back exactly what was committed up to it.
    for (const id of [8, 9, 10]) expect(await readIds(t, id)).toEqual(written.slice(0, id * 2).sort((a, b) => a - b));

    // Nothing but schema, hints and the files of retained snapshots is left: the manifest lists
    // and snapshot files of 1..7 are gone, nothing a retained snapshot needs is.
    const referenced = new Set<string>();
    for (const id of [8, 9, 10]) for (const p of await referencedBy(t, id)) referenced.add(p);
    const present = await filesUnder(t);
    for (const p of referenced) expect(present.has(p), p).toBe(true);
    const leftovers = [...present].filter(
      (p) => !referenced.has(p) && !p.includes('/schema/') && p !== t.paths.earliestHint && p !== t.paths.latestHint,
    );
    expect(leftovers).toEqual([]);
  });

  it('an overwrite deletes the replaced data files once no retained snapshot needs them', async () => {
    const t = await createTable(RETAIN_3);
    const filesOf = async (id: number): Promise<string[]> => {
      const plan = await t.newRead({ snapshotId: id }).plan();
      return plan.splits.flatMap((s) => s.files.map((f) => f.path));
    };
    await t.append(rows([1]));
    await sleep(5);
    await t.append(rows([2]));
    const replaced = await filesOf(2);
    expect(replaced.length).toBeGreaterThan(0);
    await sleep(5);
    expect((await t.overwrite(rows([3]))).status).toBe('committed'); // snapshot 3 deletes them
    await sleep(5);
    await t.append(rows([4])); // 4: snapshots 2..4 retained, 2 still needs the replaced files
    for (const p of replaced) expect(await t.fileIO.exists(p), p).toBe(true);
    expect(await readIds(t, 2)).toEqual([1, 2]);
    await sleep(5);
    await t.append(rows([5])); // 5: snapshot 2 expires, nothing retained needs them
    expect(await snapshotIds(t)).toEqual([3, 4, 5]);
    for (const p of replaced) expect(await t.fileIO.exists(p), p).toBe(false);
    expect(await readIds(t, 3)).toEqual([3]);
    expect(await readIds(t, 5)).toEqual([3, 4, 5]);
    for (const p of await filesOf(5)) expect(await t.fileIO.exists(p), p).toBe(true);
  });

  it('uses the committer clock with the default 1 h retention (newCommit().commit)', async () => {
    const t = await createTable({ 'snapshot.num-retained.min': '3' });
    let clock = Date.UTC(2024, 0, 1);
    const commit = t.newCommit({ now: () => clock });
    const commitRows = async (id: number): Promise<void> => {
      const w = t.newBatchWrite();
      await w.write(rows([id]));
      const messages = await w.prepareCommit();
      await w.close();
      expect((await commit.commit({ messages })).status).toBe('committed');
    };
    for (let i = 1; i <= 6; i++) {
      clock += 60_000; // one minute apart: all inside the retention time
      await commitRows(i);
    }
    expect(await snapshotIds(t)).toEqual([1, 2, 3, 4, 5, 6]);
    clock += 2 * 3_600_000; // now all are older than 1 h: only num-retained.min holds them
    await commitRows(7);
    expect(await snapshotIds(t)).toEqual([5, 6, 7]);
    expect(await earliestHint(t)).toBe('5');
    expect(await readIds(t, 5)).toEqual([1, 2, 3, 4, 5]);
    expect(await readIds(t, 7)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('one-shot writes of a table (each its own committer) share what expiration learned: no expiration requests while nothing can expire', async () => {
    const inner = new MemoryFileIO();
    let consumerLists = 0;
    const io = new Proxy(inner, {
      get(target, prop) {
        const value = Reflect.get(target, prop) as unknown;
        if (typeof value !== 'function') return value;
        if (prop !== 'list') return (value as (...a: unknown[]) => unknown).bind(target);
        return (path: string, ...rest: unknown[]) => {
          // Every full expiration run lists the consumers (their snapshots are kept).
          if (path.endsWith('/consumer')) consumerLists++;
          return (value as (...a: unknown[]) => unknown).call(target, path, ...rest);
        };
      },
    }) as FileIO;
    // The default retention (at least 10 snapshots, one hour): nothing can expire here.
    const t = await createTable({}, io);
    for (let i = 0; i < 6; i++) expect((await t.append(rows([i]))).status).toBe('committed');
    // The first append's run learns that the earliest snapshot stays; the others skip theirs.
    expect(consumerLists).toBe(1);
    expect(await snapshotIds(t)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('filterAndCommit expires once after committing', async () => {
    const t = await createTable({ 'snapshot.num-retained.min': '3' });
    let clock = Date.UTC(2024, 0, 1);
    const commit = t.newCommit({ commitUser: 'job', now: () => (clock += 3_600_001) });
    const committables = [];
    for (let i = 1; i <= 5; i++) {
      const w = t.newBatchWrite();
      await w.write(rows([i]));
      committables.push({ identifier: BigInt(i), messages: await w.prepareCommit() });
      await w.close();
    }
    const results = await commit.filterAndCommit(committables);
    expect(results.map((r) => r.status)).toEqual(['committed', 'committed', 'committed', 'committed', 'committed']);
    expect(await snapshotIds(t)).toEqual([3, 4, 5]);
    expect(await readIds(t, 3)).toEqual([1, 2, 3]);
  });

  it("write-only = 'true' keeps every snapshot", async () => {
    const t = await createTable({ ...RETAIN_3, 'write-only': 'true' });
    for (let i = 1; i <= 10; i++) {
      await sleep(2);
      expect((await t.append(rows([i]))).status).toBe('committed');
    }
    expect(await snapshotIds(t)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const id of [1, 5, 10]) expect(await readIds(t, id)).toEqual(Array.from({ length: id }, (_, k) => k + 1));
  });

  it('expire: false disables it per call and per committer', async () => {
    const t = await createTable(RETAIN_3);
    for (let i = 1; i <= 5; i++) {
      await sleep(2);
      await t.append(rows([i]), { expire: false });
    }
    await sleep(2);
    await t.overwrite(rows([6]), { expire: false });
    const commit = t.newCommit({ expire: false });
    const w = t.newBatchWrite();
    await w.write(rows([7]));
    const messages = await w.prepareCommit();
    await w.close();
    await sleep(2);
    expect((await commit.commit({ messages })).status).toBe('committed');
    expect(await snapshotIds(t)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // Enabled again, the next commit catches up (at most snapshot.expire.limit = 50 per run).
    await sleep(5);
    await t.append(rows([8]));
    expect(await snapshotIds(t)).toEqual([6, 7, 8]);
    expect(await readIds(t, 8)).toEqual([6, 7, 8]);
  });

  it('a failing expiration does not fail the commit, and a later commit finishes it', async () => {
    let armed = true;
    const t = await createTable(
      RETAIN_3,
      faultyDeletes(new MemoryFileIO(), () => armed),
    );
    const warnings: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      warnings.push(args.map(String).join(' '));
    });
    for (let i = 1; i <= 6; i++) {
      await sleep(5);
      expect((await t.append(rows([i]))).status).toBe('committed');
    }
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.every((w) => w.includes('automatic snapshot expiration') && w.includes('injected delete failure'))).toBe(true);
    expect(await snapshotIds(t)).toEqual([1, 2, 3, 4, 5, 6]);
    for (let id = 1; id <= 6; id++) expect(await readIds(t, id)).toEqual(Array.from({ length: id }, (_, k) => k + 1));

    // The logger of newCommit receives the warning instead of the console.
    const logged: string[] = [];
    const commit = t.newCommit({ logger: { warn: (m) => logged.push(m) } });
    const w = t.newBatchWrite();
    await w.write(rows([7]));
    const messages = await w.prepareCommit();
    await w.close();
    await sleep(5);
    expect((await commit.commit({ messages })).status).toBe('committed');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain(t.paths.root);

    armed = false;
    await sleep(5);
    expect((await t.append(rows([8]))).status).toBe('committed');
    expect(await snapshotIds(t)).toEqual([6, 7, 8]);
    expect(await earliestHint(t)).toBe('6');
    expect(await readIds(t, 6)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('rejects an invalid write-only value when creating a committer', async () => {
    await expect(createTable({ 'write-only': 'yes' })).rejects.toThrow(/'write-only' has invalid value 'yes'/);
    // A table written elsewhere can still carry the value: its committer refuses it.
    const valid = await createTable({});
    const schema = { ...valid.schema(), id: 1, options: { 'write-only': 'yes' } };
    await valid.fileIO.write(`${valid.location}/schema/schema-1`, serializeSchema(schema));
    const t = await Table.open(valid.location, { fileIO: valid.fileIO });
    expect(() => t.newCommit()).toThrow(InvalidOptionError);
    expect(() => t.newCommit()).toThrow(/write-only/);
  });
});
