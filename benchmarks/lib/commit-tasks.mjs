/**
 * Child-process tasks of the commit benchmark (`node commit-tasks.mjs <task> <json args>`; protocol
 * in lib/measure.mjs). Every task opens the table through a FileIO wrapper that counts storage
 * calls and snapshot creates that lost the race (`createIfAbsent` of `snapshot-N` answering
 * `already-exists`).
 *
 * Tasks:
 * - `create`: creates the unpartitioned append table `bench.c` in `warehouse` (local path or s3://).
 * - `commits`: `commits` small appends in a row, each `newBatchWrite()` + `write(rows)` +
 *   `prepareCommit()` (timed as write) then `TableCommit.commit({ identifier, messages })` (timed
 *   as commit) with one commitUser and increasing identifiers (the streaming pattern). Each commit
 *   also reports where its time went (backoff / expiration / writes / reads / cpu, see timeline())
 *   and every snapshot attempt (retry, outcome, attempt ms, backoff drawn) from the committer's
 *   `onAttempt` hook, and the process's CPU time over the timed appends. `warmup`
 *   appends run first and are not recorded. With `startAt` (epoch ms) the timed part waits until
 *   then, so concurrent writer processes start together.
 * - `check`: latest snapshot id, total record count, and whether snapshot ids 1..latest are all
 *   present.
 * - `latency`: the store's own latency, serially: `n` 1 KiB PUTs, create-if-absent of new keys and
 *   GETs under `warehouse` (what a commit's round trips cost at least), deleted afterwards.
 * - `casRace`: the store alone under contention (GET + create-if-absent rounds on shared keys).
 * - `cleanup`: deletes everything under the warehouse.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { instrumentFileIO } from '../../test/support/instrumented-file-io.mjs';
import { storageOptions } from './bench-storage.mjs';
import { childMain } from './measure.mjs';
import { TABLE_FIELDS, makeBatch } from './write-data.mjs';

/**
 * With TIDEMARK_BENCH_CPU_PROF=<dir>: a V8 CPU profile of the timed appends alone (no imports,
 * no warm-up), written to `<dir>/<name>.cpuprofile` (benchmarks/commit-cpu-profile.mjs reads them).
 */
async function startProfiler() {
  const dir = process.env.TIDEMARK_BENCH_CPU_PROF;
  if (!dir) return null;
  const { Session } = await import('node:inspector/promises');
  const { writeFile } = await import('node:fs/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  return {
    async stop(name) {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(`${dir}/${name}.cpuprofile`, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

const SNAPSHOT_FILE = /\/snapshot\/snapshot-\d+$/;

/**
 * Wraps a FileIO to count requests per method and per request kind, lost snapshot races, and
 * sequential round trips: a round trip starts whenever a request is issued while none is in
 * flight, so requests issued together (in parallel) count once.
 */
function counting(io) {
  const counts = {};
  const kinds = {};
  const time = timeline();
  const stats = { counts, kinds, lostRaces: 0, roundTrips: 0, time };
  const sideOf = (kind) => (kind === 'get' || kind === 'head' || kind === 'list' ? 'reads' : 'writes');
  const proxy = instrumentFileIO(io, {
    start(request) {
      counts[request.method] = (counts[request.method] ?? 0) + 1;
      kinds[request.kind] = (kinds[request.kind] ?? 0) + 1;
      // TIDEMARK_BENCH_TARGETS=1: also count the commit calls' requests by kind and target (commit-cpu-profile.mjs).
      if (process.env.TIDEMARK_BENCH_TARGETS && stats.time.timing()) {
        // What a request is for: its path's last two segments, uuids and numbers collapsed.
        const where = String(request.path ?? 'many files')
          .split('/')
          .slice(-2)
          .join('/')
          .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(-\d+)?/g, '<uuid>')
          .replace(/\d+/g, 'N');
        const t = `${request.kind} ${where}`;
        stats.targets = stats.targets ?? {};
        stats.targets[t] = (stats.targets[t] ?? 0) + 1;
      }
      if (request.newRoundTrip) stats.roundTrips++;
      time.start(sideOf(request.kind));
    },
    end(request, outcome) {
      time.end(sideOf(request.kind));
      if (request.method === 'createIfAbsent' && SNAPSHOT_FILE.test(String(request.path)) && outcome.value === 'already-exists') {
        stats.lostRaces++;
      }
    },
  });
  return { io: proxy, stats };
}

/**
 * Where the wall time of a commit call goes, split without double counting: `backoff` while the
 * committer sleeps between attempts (its prefetch of the winner's files runs underneath), else
 * `expire` while the automatic expiration runs, else `write` while a PUT / conditional PUT / DELETE
 * is in flight, else `read` while a GET / HEAD / LIST is, else `cpu` (encoding, decoding, the event
 * loop; on a shared machine also waiting for a core).
 */
function timeline() {
  const acc = { backoff: 0, expire: 0, write: 0, read: 0, cpu: 0 };
  const open = { reads: 0, writes: 0 };
  let phase = null; // null (not timing) | 'commit' | 'expire'
  let last = 0;
  let backoffUntil = 0;
  const mark = () => {
    const now = performance.now();
    if (phase !== null) {
      let from = last;
      if (backoffUntil > from) {
        const b = Math.min(now, backoffUntil) - from;
        acc.backoff += b;
        from += b;
      }
      const rest = now - from;
      if (rest > 0) {
        const key = phase === 'expire' ? 'expire' : open.writes > 0 ? 'write' : open.reads > 0 ? 'read' : 'cpu';
        acc[key] += rest;
      }
    }
    last = now;
  };
  return {
    start(side) {
      mark();
      open[side]++;
    },
    end(side) {
      mark();
      open[side]--;
    },
    timing: () => phase !== null,
    /** Enters `commit` or `expire`, or stops timing (null). */
    phase(p) {
      mark();
      phase = p;
    },
    backoff(ms) {
      mark();
      backoffUntil = last + ms;
    },
    /** Totals so far (ms). */
    totals() {
      mark();
      return { ...acc };
    },
  };
}

function snapshotCounts(stats) {
  return { ...stats.counts, lostRaces: stats.lostRaces, gaveUp: stats.gaveUp ?? 0 };
}

function snapshotKinds(stats) {
  return { ...stats.kinds, roundTrips: stats.roundTrips };
}

function diffCounts(after, before) {
  const out = {};
  for (const k of Object.keys(after)) out[k] = after[k] - (before[k] ?? 0);
  return out;
}

async function openBench(warehouse, s3) {
  const storage = await import('@tidemark/storage');
  const core = await import('@tidemark/core');
  const raw = storage.resolveFileIO(warehouse, storageOptions(s3));
  const { io, stats } = counting(raw);
  const catalog = new core.FileSystemCatalog(warehouse, { fileIO: io });
  return { core, catalog, io, raw, stats };
}

const tasks = {
  async create({ warehouse, s3 }) {
    const { catalog, raw } = await openBench(warehouse, s3);
    await catalog.createTable('bench.c', { fields: TABLE_FIELDS });
    await raw.close();
    return { location: catalog.tableLocation('bench.c') };
  },

  async commits({ warehouse, s3, commits, rows, warmup = 0, writerId = 0, startAt }) {
    const { catalog, raw, stats } = await openBench(warehouse, s3);
    const table = await catalog.getTable('bench.c');
    const commitUser = `bench-writer-${writerId}`;
    /** Every snapshot attempt of the timed commits (the committer's trace hook). */
    const attempts = [];
    let timing = false;
    const committer = table.newCommit({
      commitUser,
      onAttempt: (a) => {
        stats.time.backoff(a.waitMs);
        if (timing) {
          const { retry, outcome, attemptMs, waitMs } = a;
          attempts.push({ identifier: Number(a.identifier), retry, outcome, attemptMs, waitMs });
        }
      },
    });
    // The automatic expiration runs after the store-level commit returns: time it apart.
    const inner = committer.fileStoreCommit;
    const innerCommit = inner.commit.bind(inner);
    inner.commit = async (...args) => {
      try {
        return await innerCommit(...args);
      } finally {
        stats.time.phase('expire');
      }
    };
    // Row ids distinct across writers and commits, so a reader can check every row once.
    const total = (warmup + commits) * rows;
    let identifier = 0;
    let next = writerId * total;
    const appendOne = async () => {
      identifier++;
      const batch = makeBatch(next, rows, 1e12);
      next += rows;
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      const writer = table.newBatchWrite();
      await writer.write(batch);
      const messages = await writer.prepareCommit();
      await writer.close();
      const t1 = performance.now();
      const c1 = process.cpuUsage();
      const k1 = snapshotKinds(stats);
      const time1 = stats.time.totals();
      let result;
      for (;;) {
        stats.time.phase('commit');
        try {
          result = await committer.commit({ identifier, messages });
          break;
        } catch (e) {
          // Gave up after commit.max-retries lost races: commit the same identifier again, as a
          // streaming job re-commits its checkpoint (idempotent: it is skipped if it landed).
          if (e?.name !== 'CommitRetryExhaustedError') throw e;
          stats.gaveUp = (stats.gaveUp ?? 0) + 1;
        }
      }
      const t2 = performance.now();
      const c2 = process.cpuUsage();
      const cpuOf = (a, b) => (b.user - a.user + b.system - a.system) / 1000;
      stats.time.phase(null);
      const timeMs = diffCounts(stats.time.totals(), time1);
      if (result.status !== 'committed') throw new Error(`commit ${identifier} of ${commitUser}: ${JSON.stringify(result)}`);
      return {
        writeMs: t1 - t0,
        writeCpuMs: cpuOf(c0, c1),
        commitCpuMs: cpuOf(c1, c2),
        commitMs: t2 - t1,
        snapshotId: result.snapshotId,
        commitKinds: diffCounts(snapshotKinds(stats), k1),
        timeMs,
      };
    };
    for (let i = 0; i < warmup; i++) await appendOne();
    if (s3) await raw.verifyConditionalWrites?.(table.location); // probe outside the timed part
    if (startAt !== undefined) {
      const wait = startAt - Date.now();
      if (wait > 0) await sleep(wait);
    }
    const before = snapshotCounts(stats);
    const profiler = await startProfiler();
    timing = true;
    const startedAt = Date.now();
    const t0 = performance.now();
    // CPU of this writer over the timed appends (data file encode + commit), for the CPU ceiling.
    const cpu0 = process.cpuUsage();
    const writeMs = [];
    const commitMs = [];
    const snapshotIds = [];
    const readsPerCommit = [];
    /** Requests by kind and round trips of each commit (the commit call alone, not the data write). */
    const commitKinds = [];
    /** Where each commit's time went (see timeline()). */
    const commitTime = [];
    // Of the CPU: the data file writes (Parquet encode, upload) and the commit calls.
    let writeCpuMs = 0;
    let commitCpuMs = 0;
    for (let i = 0; i < commits; i++) {
      const reads = stats.counts.read ?? 0;
      const r = await appendOne();
      writeMs.push(r.writeMs);
      commitMs.push(r.commitMs);
      snapshotIds.push(r.snapshotId);
      readsPerCommit.push((stats.counts.read ?? 0) - reads);
      commitKinds.push(r.commitKinds);
      commitTime.push(r.timeMs);
      writeCpuMs += r.writeCpuMs;
      commitCpuMs += r.commitCpuMs;
    }
    const ms = performance.now() - t0;
    const endedAt = Date.now();
    const cpu = process.cpuUsage(cpu0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    await profiler?.stop(`writer-${writerId}`);
    const ops = diffCounts(snapshotCounts(stats), before);
    await raw.close();
    return {
      writerId,
      commits,
      warmup,
      rows,
      ms,
      startedAt,
      endedAt,
      writeMs,
      commitMs,
      snapshotIds,
      readsPerCommit,
      commitKinds,
      commitTime,
      attempts,
      ops,
      cpuMs,
      writeCpuMs,
      commitCpuMs,
      ...(stats.targets ? { targets: stats.targets } : {}),
    };
  },

  async check({ warehouse, s3 }) {
    const { catalog, raw } = await openBench(warehouse, s3);
    const table = await catalog.getTable('bench.c');
    const latest = await table.snapshotManager.latest();
    let missing = 0;
    for (let id = 1; id <= (latest?.id ?? 0); id++) if ((await table.snapshotManager.tryGet(id)) === null) missing++;
    let rows = 0;
    const ids = new Set();
    let duplicates = 0;
    for await (const batch of table.newRead({ columns: ['id'] }).batches()) {
      const col = batch.getChild('id');
      for (let i = 0; i < batch.numRows; i++) {
        const v = col.get(i);
        if (ids.has(v)) duplicates++;
        ids.add(v);
      }
      rows += batch.numRows;
    }
    await raw.close();
    return {
      latestId: latest?.id ?? 0,
      totalRecordCount: Number(latest?.totalRecordCount ?? 0),
      missingSnapshots: missing,
      rowsRead: rows,
      duplicates,
    };
  },

  async latency({ warehouse, s3, n = 100 }) {
    const { raw } = await openBench(warehouse, s3);
    const body = new Uint8Array(1024).fill(7);
    const dir = `${warehouse}/latency-probe`;
    const time = async (f) => {
      const out = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await f(i);
        out.push(performance.now() - t0);
      }
      return out;
    };
    const put = await time((i) => raw.write(`${dir}/put-${i}`, body));
    const createIfAbsent = await time((i) => raw.createIfAbsent(`${dir}/cas-${i}`, body));
    const get = await time((i) => raw.read(`${dir}/put-${i}`));
    const paths = [];
    for await (const st of raw.list(dir)) paths.push(st.path);
    await raw.deleteMany(paths);
    await raw.close();
    return { put, createIfAbsent, get };
  },

  /**
   * The store's ceiling for contended commits: each of several processes runs `wins` rounds of
   * "GET the newest key, create-if-absent the next one" on one shared sequence of keys (the two
   * requests a snapshot commit cannot avoid), moving on to the next key after a lost race.
   */
  async casRace({ warehouse, s3, wins, writerId, startAt }) {
    const { raw } = await openBench(warehouse, s3);
    const dir = `${warehouse}/cas-race`;
    const body = new Uint8Array(1024).fill(writerId);
    await raw.exists(`${dir}/warm-up`); // the connection, outside the timed part
    const wait = startAt - Date.now();
    if (wait > 0) await sleep(wait);
    const startedAt = Date.now();
    const roundMs = [];
    let next = 1;
    let won = 0;
    let lost = 0;
    let t = performance.now();
    while (won < wins) {
      if (next > 1) await raw.read(`${dir}/slot-${next - 1}`);
      const r = await raw.createIfAbsent(`${dir}/slot-${next}`, body);
      next++;
      if (r === 'created') {
        won++;
        const now = performance.now();
        roundMs.push(now - t);
        t = now;
      } else lost++;
    }
    const endedAt = Date.now();
    await raw.close();
    return { writerId, won, lost, startedAt, endedAt, roundMs };
  },

  async cleanup({ warehouse, s3 }) {
    const { raw } = await openBench(warehouse, s3);
    const paths = [];
    for await (const s of raw.list(warehouse)) paths.push(s.path);
    const n = await raw.deleteMany(paths);
    await raw.close();
    return { deleted: n };
  },
};

await childMain(tasks);
