/**
 * A small append's commit costs the same number of storage requests however old the table is,
 * and a commit that loses a race re-reads only what the winner added. Counts are deterministic on
 * the in-memory store (never times).
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { readManifestList } from '@tidemark/format';
import { FileSystemCatalog, type CommitAttemptReport, type Table, type TableSpec } from '../src/index.js';
import { instrumentFileIO } from '../../../test/support/instrumented-file-io.mjs';

const SPEC: TableSpec = {
  fields: [
    { name: 'id', type: 'INT' },
    { name: 'v', type: 'STRING' },
  ],
};

interface Counter {
  io: FileIO;
  /** Requests by kind, and `roundTrips`: requests issued while none was in flight. */
  counts(): Record<string, number>;
  /** Paths read (GET) since the counter was made, in order. */
  readonly reads: string[];
  /** Paths written (PUT) since the counter was made, in order. */
  readonly writes: string[];
  /** Every request since the counter was made, in order: its kind, then its path (`many` for a batch). */
  readonly requests: string[];
  /** Runs once, before the next snapshot create through this counter. */
  beforeSnapshotCreate: (() => Promise<void>) | null;
  /** Runs once, after the next manifest list written through this counter. */
  afterListWrite: (() => Promise<void>) | null;
  /** Outcomes of the snapshot creates through this counter, in order. */
  readonly snapshotCreates: string[];
  /**
   * Milliseconds every request takes (0: as fast as memory). With a latency like an object
   * store's, requests issued together overlap and count as one round trip, as they would there.
   */
  latencyMs: number;
}

/** A FileIO that counts what passes through it (a proxy over a shared store). */
function counting(inner: FileIO): Counter {
  const counts: Record<string, number> = { roundTrips: 0 };
  const isSnapshot = (path: string | undefined): boolean => /\/snapshot\/snapshot-\d+$/.test(String(path));
  const counter: Counter = {
    io: undefined as unknown as FileIO,
    counts: () => ({ ...counts }),
    reads: [],
    writes: [],
    requests: [],
    beforeSnapshotCreate: null,
    afterListWrite: null,
    snapshotCreates: [],
    latencyMs: 0,
  };
  counter.io = instrumentFileIO(inner, {
    latencyMs: () => counter.latencyMs,
    before(request) {
      counts[request.kind] = (counts[request.kind] ?? 0) + 1;
      counter.requests.push(`${request.kind} ${request.path ?? 'many'}`);
      if (request.method === 'read') counter.reads.push(String(request.path));
      if (request.method === 'write') counter.writes.push(String(request.path));
      if (request.method === 'createIfAbsent' && isSnapshot(request.path) && counter.beforeSnapshotCreate) {
        const hook = counter.beforeSnapshotCreate;
        counter.beforeSnapshotCreate = null;
        return hook();
      }
    },
    start(request) {
      if (request.newRoundTrip) counts.roundTrips!++;
    },
    after(request, { value }) {
      if (request.method === 'createIfAbsent' && isSnapshot(request.path)) counter.snapshotCreates.push(String(value));
      if (request.method === 'write' && String(request.path).includes('/manifest-list-') && counter.afterListWrite) {
        const hook = counter.afterListWrite;
        counter.afterListWrite = null;
        return hook();
      }
    },
  });
  return counter;
}

/** Two Table objects on one in-memory `store`: `ta` counted through `a`, `tb` (another writer) not. */
async function twoWriters(): Promise<{ store: MemoryFileIO; a: Counter; ta: Table; tb: Table }> {
  const store = new MemoryFileIO();
  const root = `memory://commit-requests-${process.pid}-${++n}/wh`;
  const a = counting(store);
  const ta = await openTable(a.io, root, true);
  const tb = await openTable(store, root, false);
  return { store, a, ta, tb };
}

function diff(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of new Set([...Object.keys(after), ...Object.keys(before)])) {
    const d = (after[k] ?? 0) - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

let n = 0;

async function openTable(io: FileIO, root: string, create: boolean): Promise<Table> {
  const catalog = new FileSystemCatalog(root, { fileIO: io });
  if (create) await catalog.createTable('db.t', { ...SPEC, options: {} });
  return catalog.getTable('db.t');
}

async function messagesOf(t: Table, id: number): Promise<Awaited<ReturnType<ReturnType<Table['newBatchWrite']>['prepareCommit']>>> {
  const w = t.newBatchWrite();
  await w.write([{ id, v: `v${id}` }]);
  const messages = await w.prepareCommit();
  await w.close();
  return messages;
}

const readsOf = (c: Record<string, number>): number => (c.get ?? 0) + (c.head ?? 0) + (c.list ?? 0);

describe('commit request counts', () => {
  it('a small append reads the same after 12 and after 200 snapshots, in at most 6 round trips', async () => {
    const counter = counting(new MemoryFileIO());
    const t = await openTable(counter.io, `memory://commit-requests-${process.pid}-${++n}/wh`, true);
    const commit = t.newCommit({ commitUser: 'streaming-job' });
    const perCommit: Array<Record<string, number>> = [];
    // Round trips are counted with a store latency on a few early and late commits (slow, so not all).
    const timed = new Set([13, 14, 15, 31, 196, 197, 198, 199, 200]);
    for (let i = 1; i <= 200; i++) {
      const messages = await messagesOf(t, i);
      counter.latencyMs = timed.has(i) ? 100 : 0;
      const before = counter.counts();
      const result = await commit.commit({ identifier: i, messages });
      expect(result.status).toBe('committed');
      perCommit.push(diff(counter.counts(), before));
      counter.latencyMs = 0;
    }
    // Commits 1 and 11 run a full expiration (first commit; first one past snapshot.num-retained.min).
    const steady = perCommit.slice(11);
    const reads = steady.map(readsOf);
    expect(new Set(reads)).toEqual(new Set([reads[0]]));
    expect(reads[0]).toBeLessThanOrEqual(4); // the latest snapshot and the id after it, the schema listing, one data file's stat
    for (const c of steady) expect(c['conditional-put']).toBe(1);
    const roundTrips = [...timed].map((i) => perCommit[i - 1]!.roundTrips!);
    for (const r of roundTrips) expect(r).toBeLessThanOrEqual(6);
    // The same early and late (commit 31 merges manifests: one round trip more).
    expect(roundTrips.slice(0, 3)).toEqual(roundTrips.slice(-3));
    // Manifest merging (manifest.merge-min-count 30) writes one more manifest now and then, but
    // never re-reads the manifests it merges: this committer wrote them.
    const manifestReads = counter.reads.filter((p) => /\/manifest\/manifest-(?!list-)/.test(p));
    expect(manifestReads).toEqual([]);
    expect(steady.filter((c) => (c.put ?? 0) > 5).length).toBeGreaterThan(0);
    expect((await t.snapshotManager.latest())?.id).toBe(200);
    const rows = await t.newRead().toArrowTable();
    expect(rows.numRows).toBe(200);
  });

  it('a commit that lost a race re-reads only what the winner added and rewrites only the base list and the snapshot', async () => {
    const store = new MemoryFileIO();
    const root = `memory://commit-requests-${process.pid}-${++n}/wh`;
    const a = counting(store);
    const b = counting(store);
    const ta = await openTable(a.io, root, true);
    const tb = await openTable(b.io, root, false);
    const ca = ta.newCommit({ commitUser: 'a' });
    const cb = tb.newCommit({ commitUser: 'b' });
    for (let i = 1; i <= 5; i++) {
      await ca.commit({ identifier: i, messages: await messagesOf(ta, i) });
      await cb.commit({ identifier: i, messages: await messagesOf(tb, 100 + i) });
    }
    const messages = await messagesOf(ta, 6);
    const winner = await messagesOf(tb, 106);
    // b commits snapshot 11 between a's reads and a's create of snapshot 11.
    a.beforeSnapshotCreate = async () => {
      expect((await cb.commit({ identifier: 6, messages: winner })).status).toBe('committed');
    };
    const readsBefore = a.reads.length;
    const writesBefore = a.writes.length;
    const result = await ca.commit({ identifier: 6, messages });
    expect(result).toMatchObject({ status: 'committed', snapshotId: 12 });

    const reads = a.reads.slice(readsBefore);
    const metadataReads = reads.filter((p) => p.includes('/manifest/'));
    // Only what b added since a's last commit (snapshot 10 before the race, 11 during it): their
    // manifest lists and delta manifests (base check), each once.
    const added = [await tb.snapshotManager.snapshot(10), await tb.snapshotManager.snapshot(11)];
    const listReads = metadataReads.filter((p) => p.includes('/manifest-list-'));
    expect(new Set(listReads)).toEqual(
      new Set(added.flatMap((x) => [x.baseManifestList, x.deltaManifestList]).map((x) => ta.paths.manifestPath(x))),
    );
    expect(metadataReads.filter((p) => !p.includes('/manifest-list-'))).toHaveLength(2);
    expect(new Set(metadataReads).size).toBe(metadataReads.length);
    // a had read none of these files before (it wrote its own and had not seen snapshot 11).
    for (const p of metadataReads) expect(a.reads.slice(0, readsBefore)).not.toContain(p);

    // Writes of the retry: one new base list (the delta manifest and its list are kept).
    const writes = a.writes.slice(writesBefore).filter((p) => p.includes('/manifest/'));
    const lists = writes.filter((p) => p.includes('/manifest-list-'));
    const manifests = writes.filter((p) => !p.includes('/manifest-list-'));
    expect(manifests).toHaveLength(1); // the delta manifest, written once
    expect(lists).toHaveLength(3); // delta list once, base list per attempt
    const latest = (await ta.snapshotManager.latest())!;
    const listNames = lists.map((l) => l.slice(l.lastIndexOf('/') + 1));
    expect(listNames).toContain(latest.deltaManifestList);
    expect(listNames).toContain(latest.baseManifestList);
    // Every row of both writers is live.
    const ids = (await ta.newRead().toArrowTable()).getChild('id')!.toArray() as Int32Array;
    expect([...ids].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 101, 102, 103, 104, 105, 106]);
  });

  it('onAttempt reports every snapshot attempt (a lost race, then the win), and a throwing hook changes nothing', async () => {
    const { a, ta, tb } = await twoWriters();
    const attempts: CommitAttemptReport[] = [];
    const ca = ta.newCommit({ commitUser: 'a', onAttempt: (x) => attempts.push(x) });
    const cb = tb.newCommit({ commitUser: 'b' });
    await ca.commit({ identifier: 1, messages: await messagesOf(ta, 1) });
    const b2 = await messagesOf(tb, 102);
    attempts.length = 0;
    a.snapshotCreates.length = 0;
    // b takes snapshot 2 just before a's create: a loses it, backs off and creates snapshot 3.
    a.beforeSnapshotCreate = async () => void (await cb.commit({ identifier: 2, messages: b2 }));
    expect(await ca.commit({ identifier: 2, messages: await messagesOf(ta, 2) })).toMatchObject({ status: 'committed', snapshotId: 3 });
    expect(a.snapshotCreates).toEqual(['already-exists', 'created']);
    expect(attempts.map((x) => [x.commitUser, x.identifier, x.retry, x.snapshotId, x.outcome])).toEqual([
      ['a', 2n, 0, 2, 'already-exists'],
      ['a', 2n, 1, 3, 'created'],
    ]);
    for (const x of attempts) {
      expect(x.attemptMs).toBeGreaterThanOrEqual(0);
      expect(x.waitMs).toBeGreaterThanOrEqual(0);
    }
    expect(attempts[1]!.waitMs).toBe(0); // nothing is drawn after a win

    // A hook that throws is ignored: the commit still lands.
    const throwing = ta.newCommit({
      commitUser: 'c',
      onAttempt: () => {
        throw new Error('hook failure');
      },
    });
    expect(await throwing.commit({ identifier: 1, messages: await messagesOf(ta, 3) })).toMatchObject({
      status: 'committed',
      snapshotId: 4,
    });
    const ids = (await ta.newRead().toArrowTable()).getChild('id')!.toArray() as Int32Array;
    expect([...ids].sort((x, y) => x - y)).toEqual([1, 2, 3, 102]);
  });

  it('after seeing another writer commit, a snapshot taken during the attempt is found before the create, not by a losing create', async () => {
    const { store, a, ta, tb } = await twoWriters();
    const attempts: CommitAttemptReport[] = [];
    const ca = ta.newCommit({ commitUser: 'a', onAttempt: (x) => attempts.push(x) });
    const cb = tb.newCommit({ commitUser: 'b' });
    await ca.commit({ identifier: 1, messages: await messagesOf(ta, 1) });
    await cb.commit({ identifier: 1, messages: await messagesOf(tb, 101) });
    // a sees b's snapshot 2 in its probe; b takes snapshot 3 while a writes its manifest lists.
    const b2 = await messagesOf(tb, 102);
    a.afterListWrite = async () => void (await cb.commit({ identifier: 2, messages: b2 }));
    a.snapshotCreates.length = 0;
    attempts.length = 0;
    const readsBeforeRace = a.reads.length;
    expect(await ca.commit({ identifier: 2, messages: await messagesOf(ta, 2) })).toMatchObject({ status: 'committed', snapshotId: 4 });
    // One create, and it won: the attempt on snapshot 2 stopped at the check (a GET of snapshot-3).
    expect(a.snapshotCreates).toEqual(['created']);
    // snapshot-3 is read twice: absent in the first probe, then found by the check. The catch-up
    // (base check and base list on top of it) and the next attempt's probe use it as the check read it.
    const raceReads = a.reads.slice(readsBeforeRace);
    expect(raceReads.filter((p) => p.endsWith('/snapshot/snapshot-3'))).toHaveLength(2);
    expect(attempts.map((x) => [x.retry, x.snapshotId, x.outcome])).toEqual([
      [0, 3, 'already-exists'],
      [1, 4, 'created'],
    ]);
    // Behind, not collided: it catches up at once (reading snapshot 3 while it does) instead of sleeping.
    expect(attempts[0]!.waitMs).toBe(0);
    // Nothing of the abandoned attempt stays: every manifest list left is referenced by a snapshot.
    const lists: string[] = [];
    for await (const st of store.list(ta.paths.manifestDir)) if (st.path.includes('/manifest-list-')) lists.push(st.path);
    const referenced = new Set<string>();
    for (let id = 1; id <= 4; id++) {
      const sn = await ta.snapshotManager.snapshot(id);
      for (const l of [sn.baseManifestList, sn.deltaManifestList]) referenced.add(ta.paths.manifestPath(l));
    }
    expect(new Set(lists)).toEqual(referenced);
    const ids = (await ta.newRead().toArrowTable()).getChild('id')!.toArray() as Int32Array;
    expect([...ids].sort((x, y) => x - y)).toEqual([1, 2, 101, 102]);

    // Alone again (b's snapshots out of the last 16), a commit does not pay for the check.
    for (let i = 3; i <= 18; i++) await ca.commit({ identifier: i, messages: await messagesOf(ta, i) });
    const readsBefore = a.reads.length;
    const r = await ca.commit({ identifier: 19, messages: await messagesOf(ta, 19) });
    expect(r).toMatchObject({ status: 'committed', snapshotId: 21 });
    // snapshot-21 is read once, by the probe (which found snapshot 20 the latest), not again before the create.
    expect(a.reads.slice(readsBefore).filter((p) => p.endsWith('/snapshot/snapshot-21'))).toHaveLength(1);
  });

  it('catching up with snapshots taken during its attempts does not use up commit.max-retries', async () => {
    const { a, ta, tb } = await twoWriters();
    const attempts: CommitAttemptReport[] = [];
    // One retry only: two lost races would fail the commit.
    const ca = ta.newCommit({ commitUser: 'a', commitOptions: { maxRetries: 1 }, onAttempt: (x) => attempts.push(x) });
    const cb = tb.newCommit({ commitUser: 'b' });
    await ca.commit({ identifier: 1, messages: await messagesOf(ta, 1) });
    await cb.commit({ identifier: 1, messages: await messagesOf(tb, 101) });
    // b commits whenever a has written a manifest list, 4 times: a keeps finding its id taken
    // (snapshots 3 and 5; 4 and 6 land while it catches up).
    let bCommits = 0;
    const bMessages = [await messagesOf(tb, 102), await messagesOf(tb, 103), await messagesOf(tb, 104), await messagesOf(tb, 105)];
    const bCommitsAgain = async (): Promise<void> => {
      expect((await cb.commit({ identifier: 2 + bCommits, messages: bMessages[bCommits]! })).status).toBe('committed');
      bCommits++;
      if (bCommits < bMessages.length) a.afterListWrite = bCommitsAgain;
    };
    a.afterListWrite = bCommitsAgain;
    a.snapshotCreates.length = 0;
    attempts.length = 0;
    const r = await ca.commit({ identifier: 2, messages: await messagesOf(ta, 2) });
    expect(r).toMatchObject({ status: 'committed', snapshotId: 7 });
    expect(bCommits).toBe(4);
    // Both times the id was found taken before the create (no create lost): the first was a free
    // catch-up without a sleep, the second (past commit.max-retries catch-ups) counted as the one retry.
    expect(attempts.map((x) => [x.retry, x.snapshotId, x.outcome])).toEqual([
      [0, 3, 'already-exists'],
      [1, 5, 'already-exists'],
      [2, 7, 'created'],
    ]);
    expect(a.snapshotCreates).toEqual(['created']);
    expect(attempts[0]!.waitMs).toBe(0);
    const ids = (await ta.newRead().toArrowTable()).getChild('id')!.toArray() as Int32Array;
    expect([...ids].sort((x, y) => x - y)).toEqual([1, 2, 101, 102, 103, 104, 105]);
  });

  it('a batch commit (fresh commit user, no identifier) reads no snapshot history', async () => {
    const counter = counting(new MemoryFileIO());
    const t = await openTable(counter.io, `memory://commit-requests-${process.pid}-${++n}/wh`, true);
    const streaming = t.newCommit({ commitUser: 'streaming-job' });
    for (let i = 1; i <= 30; i++) await streaming.commit({ identifier: i, messages: await messagesOf(t, i) });
    const messages = await messagesOf(t, 31);
    const before = counter.reads.length;
    // (Expiration off: its first run reads snapshots of its own.)
    expect((await t.newCommit({ expire: false }).commit({ messages })).status).toBe('committed');
    const snapshotReads = counter.reads.slice(before).filter((p) => /\/snapshot\/snapshot-\d+$/.test(p));
    // The latest snapshot and the probe past it: not snapshots 1..29.
    expect(snapshotReads.length).toBeLessThanOrEqual(3);
  });

  it('a base list written while backing off for a snapshot that is no longer the latest is deleted, not left behind', async () => {
    const { store, a, ta, tb } = await twoWriters();
    const ca = ta.newCommit({ commitUser: 'a' });
    const cb = tb.newCommit({ commitUser: 'b' });
    await ca.commit({ identifier: 1, messages: await messagesOf(ta, 1) });
    const b2 = await messagesOf(tb, 102);
    const b3 = await messagesOf(tb, 103);
    // b wins snapshot 2 before a's create; while a backs off and writes its base list for
    // snapshot 2, b commits snapshot 3 as well.
    a.beforeSnapshotCreate = async () => {
      await cb.commit({ identifier: 2, messages: b2 });
      a.afterListWrite = async () => void (await cb.commit({ identifier: 3, messages: b3 }));
    };
    expect(await ca.commit({ identifier: 2, messages: await messagesOf(ta, 2) })).toMatchObject({ status: 'committed', snapshotId: 4 });

    // Every manifest and manifest list in the table belongs to some snapshot.
    const referenced = new Set<string>();
    for (let id = 1; id <= 4; id++) {
      const s = await tb.snapshotManager.snapshot(id);
      for (const list of [s.baseManifestList, s.deltaManifestList]) {
        referenced.add(list);
        for (const m of await readManifestList(store, tb.paths.manifestPath(list))) referenced.add(m.fileName);
      }
    }
    const present: string[] = [];
    for await (const st of store.list(`${tb.location}/manifest`)) present.push(st.path.slice(st.path.lastIndexOf('/') + 1));
    expect(present.filter((x) => !referenced.has(x))).toEqual([]);
    const ids = (await ta.newRead().toArrowTable()).getChild('id')!.toArray() as Int32Array;
    expect([...ids].sort((x, y) => x - y)).toEqual([1, 2, 102, 103]);
  });

  it('a lost attempt and its retry make a fixed set of requests: the winner read and checked, one base list, one schema HEAD, one probe round', async () => {
    const { a, ta, tb } = await twoWriters();
    const ca = ta.newCommit({ commitUser: 'a' });
    const cb = tb.newCommit({ commitUser: 'b' });
    // a has seen b commit (so it checks for ids taken meanwhile) and last saw snapshots arrive one at a time.
    for (let i = 1; i <= 2; i++) {
      await ca.commit({ identifier: i, messages: await messagesOf(ta, i) });
      await cb.commit({ identifier: i, messages: await messagesOf(tb, 100 + i) });
    }
    await ca.commit({ identifier: 3, messages: await messagesOf(ta, 3) });
    const b3 = await messagesOf(tb, 103);
    const messages = await messagesOf(ta, 4);
    // b takes snapshot 6 between a's check that it is absent and a's create of it.
    a.beforeSnapshotCreate = async () => void (await cb.commit({ identifier: 3, messages: b3 }));
    const from = a.requests.length;
    expect(await ca.commit({ identifier: 4, messages })).toMatchObject({ status: 'committed', snapshotId: 7 });
    const winner = await tb.snapshotManager.snapshot(6);
    const created = await tb.snapshotManager.snapshot(7);
    const winnerManifests = (await readManifestList(tb.fileIO, tb.paths.manifestPath(winner.deltaManifestList))).map((m) => m.fileName);
    const requests = a.requests.slice(from);
    const lost = requests.indexOf(`conditional-put ${ta.paths.snapshotPath(6)}`);
    expect(lost).toBeGreaterThan(0);
    // Names of the files a wrote and dropped (its base lists for snapshot 5 and 6): not known up front.
    const label = (r: string): string => {
      const root = `${ta.location}/`;
      let x = r.replace(root, '');
      for (const [name, as] of [
        [winner.baseManifestList, 'winner-base-list'],
        [winner.deltaManifestList, 'winner-delta-list'],
        [created.baseManifestList, 'new-base-list'],
        ...winnerManifests.map((m) => [m, 'winner-delta-manifest']),
      ] as const) {
        x = x.replace(name, as);
      }
      return x
        .replace(/manifest-list-[0-9a-f-]+$/, 'lost-base-list')
        .replace(/data-[0-9a-f-]+\.parquet$/, 'data-file')
        .replace(/commit-[0-9a-f-]+\.json$/, 'record');
    };
    expect(requests.slice(lost).map(label).sort()).toEqual(
      [
        'conditional-put snapshot/snapshot-6', // the lost create
        // While backing off: the winner, its lists and delta manifest, its new data file (base
        // check), and the base list for a snapshot on top of it (under the lost base list's name).
        'get snapshot/snapshot-6',
        'get manifest/winner-base-list',
        'get manifest/winner-delta-list',
        'get manifest/winner-delta-manifest',
        'head bucket-0/data-file',
        'put manifest/new-base-list',
        // The retry: the next schema id is still absent (a HEAD, not a LIST), one GET past the
        // winner, and no second GET of that absent id before the create.
        'head schema/schema-1',
        'get snapshot/snapshot-7',
        'conditional-put snapshot/snapshot-7',
        // After the snapshot exists: the hint and the in-flight record. The lost base list is not
        // deleted: the retry's base list was written over it.
        'put snapshot/LATEST',
        'delete inflight/record',
      ].sort(),
    );
    // The base list of the lost attempt (its last list written) is the one written over.
    const lostLists = requests.slice(0, lost).filter((r) => r.startsWith('put ') && r.includes('/manifest-list-'));
    expect(lostLists.at(-1)).toBe(`put ${ta.paths.manifestPath(created.baseManifestList)}`);
  });
});
