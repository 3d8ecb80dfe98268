import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { parseSnapshot } from '@tidemark/format';
import {
  BranchAlreadyExistsError,
  BranchNotFoundError,
  BranchStateError,
  FileSystemCatalog,
  InvalidBranchNameError,
  SchemaChanges,
  Table,
  TableNotFoundError,
  TagNotFoundError,
  alterTable,
} from '../src/index.js';
import { CountingFileIO } from './helpers.js';

let n = 0;

/** A primary-key table (one bucket) in memory, with `rows` committed as one snapshot per array. */
async function setup(io: FileIO = new MemoryFileIO()): Promise<{ io: FileIO; loc: string; catalog: FileSystemCatalog }> {
  const catalog = new FileSystemCatalog(`memory://branches-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'id', type: 'INT' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['id'],
    options: { bucket: '1' },
  });
  return { io, loc: catalog.tableLocation('db.t'), catalog };
}

async function rows(t: Table, options: { tag?: string } = {}): Promise<Record<string, unknown>[]> {
  const table = await t.newRead(options).toArrowTable();
  return table.toArray().map((r) => ({ ...(r.toJSON() as Record<string, unknown>) }));
}

/** Every file under `dir` with its bytes, relative to `dir`. */
async function tree(io: FileIO, dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const st of io.list(dir)) out.set(st.path.slice(dir.length + 1), new TextDecoder().decode(await io.read(st.path)));
  return out;
}

/** main: snapshot 1 (ids 1, 2), tag t1, schema 1 (+ column x), snapshot 2 (id 3). */
async function mainWithHistory(storage?: FileIO): Promise<{ io: FileIO; loc: string; main: Table; catalog: FileSystemCatalog }> {
  const { io, loc, catalog } = await setup(storage);
  const main = await Table.open(loc, { fileIO: io });
  await main.append([
    { id: 1, v: 'a' },
    { id: 2, v: 'b' },
  ]);
  await main.createTag('t1');
  await alterTable(io, main.paths, [SchemaChanges.addColumn('x', 'INT')]);
  const main1 = await Table.open(loc, { fileIO: io });
  await main1.append([{ id: 3, v: 'c', x: 30 }]);
  return { io, loc, main: main1, catalog };
}

/** mainWithHistory, then dev from t1 with its own schema 1 (+ w), a row changed and a tag d2; main tags m2. */
async function diverged(storage?: FileIO): Promise<{ io: FileIO; loc: string; main: Table; dev: Table }> {
  const env = await mainWithHistory(storage);
  const { io, loc, main } = env;
  await main.branches().create('dev', { tag: 't1' });
  await alterTable(io, (await Table.open(loc, { fileIO: io, branch: 'dev' })).paths, [SchemaChanges.addColumn('w', 'STRING')]);
  const dev = await Table.open(loc, { fileIO: io, branch: 'dev' });
  await dev.append([{ id: 2, v: 'B', w: 'dev' }]);
  await dev.createTag('d2');
  await main.createTag('m2');
  return { io, loc, main, dev };
}

describe('branch names', () => {
  it("refuses Java's invalid names and names that are not a directory", async () => {
    const { main } = await mainWithHistory();
    const b = main.branches();
    await expect(b.create('main')).rejects.toThrow(
      new InvalidBranchNameError("branch name 'main' is the default branch and cannot be used"),
    );
    await expect(b.create(' ')).rejects.toThrow(/branch name must not be blank/);
    await expect(b.create('123')).rejects.toThrow(/branch name cannot be a pure number, but is '123'/);
    await expect(b.create('a/b')).rejects.toThrow(/must not contain '\/'/);
    await expect(b.create('.hidden')).rejects.toThrow(/must not start with '.'/);
    expect(await b.names()).toEqual([]);
  });
});

describe('branch create', () => {
  it('an empty branch copies every schema and nothing else; writes go to the branch only', async () => {
    const { io, loc, main } = await mainWithHistory();
    const before = await tree(io, loc);
    const r = await main.branches().create('dev');
    expect(r).toEqual({ name: 'dev', fromTag: null, snapshotId: null, schemaIds: [0, 1] });
    const branchDir = `${loc}/branch/branch-dev`;
    const files = await tree(io, branchDir);
    expect([...files.keys()].sort()).toEqual(['schema/schema-0', 'schema/schema-1']);
    expect(files.get('schema/schema-1')).toBe(before.get('schema/schema-1'));

    const dev = await Table.open(loc, { fileIO: io, branch: 'dev' });
    expect(dev.branch).toBe('dev');
    expect(await rows(dev)).toEqual([]);
    await dev.append([{ id: 7, v: 'dev', x: 70 }]);
    expect(await rows(dev)).toEqual([{ id: 7, v: 'dev', x: 70 }]);
    expect(await io.exists(`${branchDir}/snapshot/snapshot-1`)).toBe(true);
    // main's metadata is as it was; its rows too.
    const after = await tree(io, loc);
    for (const [k, v] of before) expect(after.get(k)).toBe(v);
    expect([...after.keys()].filter((k) => /^(snapshot|schema|tag)\//.test(k))).toEqual(
      [...before.keys()].filter((k) => /^(snapshot|schema|tag)\//.test(k)),
    );
    expect(await rows(await Table.open(loc, { fileIO: io }))).toHaveLength(3);
  });

  it("from a tag copies the tag, the tagged snapshot and the schemas up to the snapshot's, byte for byte", async () => {
    const { io, loc, main } = await mainWithHistory();
    const r = await main.branches().create('dev', { tag: 't1' });
    expect(r).toEqual({ name: 'dev', fromTag: 't1', snapshotId: 1, schemaIds: [0] });
    const branchDir = `${loc}/branch/branch-dev`;
    const files = await tree(io, branchDir);
    expect([...files.keys()].sort()).toEqual(['schema/schema-0', 'snapshot/snapshot-1', 'tag/tag-t1']);
    const mainFiles = await tree(io, loc);
    expect(files.get('tag/tag-t1')).toBe(mainFiles.get('tag/tag-t1'));
    expect(files.get('snapshot/snapshot-1')).toBe(mainFiles.get('snapshot/snapshot-1'));
    expect(files.get('schema/schema-0')).toBe(mainFiles.get('schema/schema-0'));

    const dev = await Table.open(loc, { fileIO: io, branch: 'dev' });
    expect(dev.schema().id).toBe(0);
    expect(await rows(dev)).toEqual([
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
    ]);
    expect(await rows(dev, { tag: 't1' })).toHaveLength(2);
    const [info] = await main.branches().list();
    expect(info).toMatchObject({
      name: 'dev',
      earliestSnapshotId: 1,
      latestSnapshotId: 1,
      latestSchemaId: 0,
      tags: 1,
      createdFromTag: 't1',
    });
  });

  it('from a tag whose snapshot expired writes the snapshot from the tag', async () => {
    const { io, loc, main } = await mainWithHistory();
    const tagged = parseSnapshot(await io.read(main.paths.snapshotPath(1)), 's1');
    await io.delete(main.paths.snapshotPath(1));
    await main.branches().create('dev', { tag: 't1' });
    const copy = parseSnapshot(await io.read(`${loc}/branch/branch-dev/snapshot/snapshot-1`), 'copy');
    expect(copy).toEqual(tagged);
    expect(await rows(await Table.open(loc, { fileIO: io, branch: 'dev' }))).toHaveLength(2);
  });

  it('refuses an existing branch, an unknown tag and a missing table', async () => {
    const { io, loc, main } = await mainWithHistory();
    await main.branches().create('dev');
    await expect(main.branches().create('dev', { tag: 't1' })).rejects.toThrow(BranchAlreadyExistsError);
    await expect(main.branches().create('qa', { tag: 'nope' })).rejects.toThrow(new TagNotFoundError('nope', ['t1']));
    expect(await main.branches().names()).toEqual(['dev']);
    await expect(Table.open(`${loc}-missing`, { fileIO: io, branch: 'dev' })).rejects.toThrow(TableNotFoundError);
  });
});

describe('opening a branch', () => {
  it('names the branches that exist when the one asked for does not', async () => {
    const { io, loc, main } = await mainWithHistory();
    await expect(Table.open(loc, { fileIO: io, branch: 'dev' })).rejects.toThrow(new BranchNotFoundError('dev', loc, []));
    await main.branches().create('qa');
    await main.branches().create('dev2');
    await expect(Table.open(loc, { fileIO: io, branch: 'dev' })).rejects.toThrow(
      /branch 'dev' does not exist in table .*; branches: 'dev2', 'qa'/,
    );
    await expect(Table.open(loc, { fileIO: io, branch: '../x' })).rejects.toThrow(InvalidBranchNameError);
    await expect(Table.open(loc, { fileIO: io, branch: '' })).rejects.toThrow(/must not be blank/);
    expect((await Table.open(loc, { fileIO: io, branch: 'main' })).branch).toBe('main');
  });

  it('opens db.t$branch_dev through the catalog, as Paimon names a branch', async () => {
    const { catalog, main } = await mainWithHistory();
    await main.branches().create('dev', { tag: 't1' });
    const dev = await catalog.getTable('db.t$branch_dev');
    expect(dev.branch).toBe('dev');
    expect(await rows(dev)).toHaveLength(2);
    await expect(catalog.getTable('db.t$branch_nope')).rejects.toThrow(BranchNotFoundError);
  });
});

describe('reads and writes on a branch', () => {
  it('keeps snapshots, tags and schemas apart while main keeps writing', async () => {
    const { io, loc, main } = await mainWithHistory();
    await main.branches().create('dev', { tag: 't1' });
    const dev = await Table.open(loc, { fileIO: io, branch: 'dev' });
    await dev.append([{ id: 2, v: 'B' }]);
    await dev.createTag('d1');
    await main.append([{ id: 4, v: 'd', x: 40 }]);
    await alterTable(io, dev.paths, [SchemaChanges.addColumn('w', 'STRING')]);
    const dev1 = await Table.open(loc, { fileIO: io, branch: 'dev' });
    await dev1.append([{ id: 9, v: 'z', w: 'new' }]);
    expect(await rows(dev1)).toEqual([
      { id: 1, v: 'a', w: null },
      { id: 2, v: 'B', w: null },
      { id: 9, v: 'z', w: 'new' },
    ]);
    expect(await rows(await Table.open(loc, { fileIO: io }))).toEqual([
      { id: 1, v: 'a', x: null },
      { id: 2, v: 'b', x: null },
      { id: 3, v: 'c', x: 30 },
      { id: 4, v: 'd', x: 40 },
    ]);
    expect((await dev1.listTags()).map((t) => t.name)).toEqual(['t1', 'd1']);
    expect((await main.listTags()).map((t) => t.name)).toEqual(['t1']);
    expect(await dev1.snapshotManager.sortedIds()).toEqual([1, 2, 3]);
    expect(await main.snapshotManager.sortedIds()).toEqual([1, 2, 3]);
    // Same ids, different snapshots: each branch numbers its own.
    expect((await main.snapshotManager.snapshot(3)).deltaManifestList).not.toBe((await dev1.snapshotManager.snapshot(3)).deltaManifestList);
    // Time travel reads with the tagged snapshot's schema, of the branch.
    expect(await rows(dev1, { tag: 'd1' })).toEqual([
      { id: 1, v: 'a' },
      { id: 2, v: 'B' },
    ]);
  });
});

describe('branch delete', () => {
  it("deletes the branch directory and nothing of main's", async () => {
    const { io, loc, main } = await mainWithHistory();
    const before = await tree(io, loc);
    await main.branches().create('dev', { tag: 't1' });
    const dev = await Table.open(loc, { fileIO: io, branch: 'dev' });
    await dev.append([{ id: 5, v: 'e' }]);
    const dry = await main.branches().delete('dev', { dryRun: true });
    expect(dry).toEqual({ name: 'dev', snapshots: 2, tags: 1, schemas: 1, files: 6, dryRun: true });
    expect(await main.branches().names()).toEqual(['dev']);
    const r = await main.branches().delete('dev');
    expect(r.dryRun).toBe(false);
    expect(await main.branches().names()).toEqual([]);
    expect([...(await tree(io, `${loc}/branch`)).keys()]).toEqual([]);
    const after = await tree(io, loc);
    for (const [k, v] of before) expect(after.get(k)).toBe(v);
    expect(await rows(await Table.open(loc, { fileIO: io }))).toHaveLength(3);
    await expect(main.branches().delete('dev')).rejects.toThrow(BranchNotFoundError);
    await expect(main.branches().delete('main')).rejects.toThrow(/default branch 'main' cannot be deleted/);
  });
});

describe('branch fast-forward', () => {
  it("replaces main's history from the branch's earliest snapshot on, as Java's fastForward", async () => {
    const { io, loc, main, dev } = await diverged();
    const devFiles = await tree(io, `${loc}/branch/branch-dev`);
    const dry = await main.branches().fastForward('dev', { dryRun: true });
    expect(dry).toEqual({
      branch: 'dev',
      target: 'main',
      fromSnapshotId: 1,
      removedSnapshots: [2, 1],
      removedTags: ['t1', 'm2'],
      removedSchemas: [1],
      removedChangelogs: 0,
      movedConsumers: [],
      copiedSnapshots: [1, 2],
      copiedSchemas: [0, 1],
      copiedTags: ['d2', 't1'],
      latestSnapshotId: 2,
      dryRun: true,
    });
    expect(await rows(await Table.open(loc, { fileIO: io }))).toHaveLength(3);
    const r = await main.branches().fastForward('dev');
    expect({ ...r, dryRun: true }).toEqual(dry);
    const after = await Table.open(loc, { fileIO: io });
    expect(after.schema().fields.map((f) => f.name)).toEqual(['id', 'v', 'w']);
    expect(await rows(after)).toEqual(await rows(dev));
    // main's snapshot, schema and tag files are now the branch's, byte for byte.
    const mainFiles = await tree(io, loc);
    for (const [k, v] of devFiles) expect(mainFiles.get(k)).toBe(v);
    expect([...mainFiles.keys()].filter((k) => /^(snapshot\/snapshot|schema|tag)/.test(k)).sort()).toEqual(
      [...devFiles.keys()].filter((k) => /^(snapshot\/snapshot|schema|tag)/.test(k)).sort(),
    );
    expect(mainFiles.get('snapshot/LATEST')).toBe('2');
    // The branch stays, and main continues from the branch's latest snapshot.
    expect(await main.branches().names()).toEqual(['dev']);
    await after.append([{ id: 6, v: 'f', w: 'main' }]);
    expect(await after.snapshotManager.latestId()).toBe(3);
    expect((await rows(after)).map((r) => r['id'])).toEqual([1, 2, 6]);
  });

  it('refuses main, the current branch, an unknown branch and a branch without snapshots', async () => {
    const { io, loc, main } = await diverged();
    await expect(main.branches().fastForward('main')).rejects.toThrow(InvalidBranchNameError);
    await expect(main.branches().fastForward('nope')).rejects.toThrow(BranchNotFoundError);
    await main.branches().create('empty');
    await expect(main.branches().fastForward('empty')).rejects.toThrow(BranchStateError);
    const dev = await Table.open(loc, { fileIO: io, branch: 'dev' });
    await expect(dev.branches().fastForward('dev')).rejects.toThrow(/into itself/);
  });

  it('leaves a readable table when cut off at any step, and a rerun finishes the same way', async () => {
    const metadata = (files: Map<string, string>): string[][] =>
      [...files].filter(([k]) => /^(snapshot\/snapshot-|schema\/|tag\/)/.test(k)).sort(([a], [b]) => (a < b ? -1 : 1));
    let step = 0;
    for (;;) {
      step++;
      const faulty = new FailingFileIO();
      const env = await diverged(faulty);
      // The branch starts at snapshot 1: main ends up with exactly the branch's metadata files.
      const expected = metadata(await tree(faulty, `${env.loc}/branch/branch-dev`));
      const expectedRows = await rows(await Table.open(env.loc, { fileIO: faulty, branch: 'dev' }));
      faulty.failAt = faulty.mutations + step;
      const outcome = await env.main
        .branches()
        .fastForward('dev')
        .then(
          () => 'done',
          (e: unknown) => {
            if (!(e instanceof InjectedFailure)) throw e;
            return 'cut';
          },
        );
      faulty.failAt = Infinity;
      // Whatever was done, main opens and its latest snapshot reads.
      const cut = await Table.open(env.loc, { fileIO: faulty });
      await rows(cut);
      if (outcome === 'cut') await cut.branches().fastForward('dev');
      const again = await Table.open(env.loc, { fileIO: faulty });
      expect(await rows(again)).toEqual(expectedRows);
      expect(metadata(await tree(faulty, env.loc))).toEqual(expected);
      if (outcome === 'done') break;
      expect(step).toBeLessThan(100);
    }
    expect(step).toBeGreaterThan(8);
  });
});

class InjectedFailure extends Error {}

/** Memory storage whose `failAt`-th mutating call (write, create, delete) fails before doing anything. */
class FailingFileIO extends CountingFileIO {
  mutations = 0;
  failAt = Infinity;

  private mutate(): void {
    if (++this.mutations >= this.failAt) throw new InjectedFailure(`injected failure at mutation ${this.mutations}`);
  }
  override async write(p: string, d: Uint8Array | string) {
    this.mutate();
    return super.write(p, d);
  }
  override async createIfAbsent(p: string, d: Uint8Array | string) {
    this.mutate();
    return super.createIfAbsent(p, d);
  }
  override async delete(p: string) {
    this.mutate();
    return super.delete(p);
  }
  override async deleteMany(paths: Iterable<string> | AsyncIterable<string>) {
    let count = 0;
    for await (const p of paths) {
      await this.delete(p);
      count++;
    }
    return count;
  }
}

describe('automatic tags on a branch', () => {
  it("the branch's options create and expire the branch's tags; main's stay", async () => {
    const { io, loc, main } = await mainWithHistory();
    await main.branches().create('dev');
    await alterTable(io, (await Table.open(loc, { fileIO: io, branch: 'dev' })).paths, [
      SchemaChanges.setOption('tag.automatic-creation', 'batch'),
      SchemaChanges.setOption('tag.num-retained-max', '1'),
    ]);
    const dev = await Table.open(loc, { fileIO: io, branch: 'dev' });
    await dev.append([{ id: 7, v: 'g' }]);
    await dev.createTag('manual');
    // The next batch write tags its snapshot; tag.num-retained-max counts the batch tags only, so
    // the user's 'manual' stays (Java would drop it).
    await dev.append([{ id: 8, v: 'h' }]);
    const devTags = await dev.listTags();
    expect(devTags.map((t) => [t.name.replace(/\d{4}-\d{2}-\d{2}$/, '<date>'), t.tag.id])).toEqual([
      ['manual', 1],
      ['batch-write-<date>', 2],
    ]);
    expect((await main.listTags()).map((t) => t.name)).toEqual(['t1']);
    // Main, without the options, tags nothing on its own writes.
    await main.append([{ id: 9, v: 'i', x: 90 }]);
    expect((await main.listTags()).map((t) => t.name)).toEqual(['t1']);
    expect((await dev.listTags()).map((t) => t.name)).toEqual(devTags.map((t) => t.name));
  });
});
