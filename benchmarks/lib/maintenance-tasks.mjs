/**
 * Child-process tasks of the maintenance benchmark (`node maintenance-tasks.mjs <task> <json args>`;
 * protocol in lib/measure.mjs). Imports the BUILT packages.
 *
 * Tasks:
 * - `history`: creates the unpartitioned append table `bench.m` in `warehouse` (a local path) and
 *   makes commits up to snapshot `snapshots` (resuming after the latest one when the table exists) with the core commit API (FileStoreCommit), each adding one tiny data
 *   file and deleting the previous one (an overwrite history: every expired snapshot frees one data
 *   file, its manifest and its manifest lists). Metadata goes through a FileIO whose writes skip
 *   fsync (the table is scratch); data files are written with plain fs.
 * - `upload`: copies every file under local `dir` to `s3://…/prefix` (32 PUTs in flight).
 * - `store-rate`: the store alone: small GETs/s at 1, 8, 32 in flight and DeleteObjects (1,000 keys)
 *   throughput at 1 and 4 in flight, with the CPU the client and (on this machine) the S3 server used.
 * - `expire`: expires all but `retainMin` snapshots of `table` in one run (expire limit lifted) and
 *   reports files deleted / s and the peak RSS.
 * - `orphan-objects`: writes `count` small objects into the bucket directory of `table` (orphan
 *   candidates younger than the threshold, so a default run lists them but deletes nothing).
 * - `orphans`: runs removeOrphanFiles on `table` with the default threshold (1 day) and reports
 *   objects scanned / s.
 * - `compact-data`: appends `files` batches of `rows` rows (one small Parquet file each) to a new
 *   table `bench.c` in `warehouse`.
 * - `compact`: compactAppendTable on `table` (full), MB/s of input; with `timeline: true`, also the
 *   worker pool's and main thread's timeline summary (lib/pool-timeline.mjs); with
 *   `passDecodedRows: false`, every row goes through Arrow on the main thread (the path before
 *   decoded rows were passed on as IPC); with
 *   `copyRowGroups: true`, large inputs' row groups are copied without decoding (off by default,
 *   as in the library).
 * - `raw-rewrite`: the same files read with parquet-wasm (readParquet) and written back with
 *   parquet-wasm (writeParquet, zstd), no table logic: MB/s of input.
 */
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { fileIOFor } from './bench-storage.mjs';
import { childMain } from './measure.mjs';
import { rawParquetRewrite } from './raw-rewrite.mjs';
import { columns, createBenchTable } from './bench-tables.mjs';

/**
 * Counts the storage requests a FileIO makes, by kind. `deleteMany` is counted as the requests S3
 * sends for it (DeleteObjects, 1,000 keys each, per call) and the keys it carried.
 */
function countingRequests(io) {
  const requests = {
    read: 0,
    readRange: 0,
    exists: 0,
    stat: 0,
    write: 0,
    createIfAbsent: 0,
    delete: 0,
    list: 0,
    deleteObjects: 0,
    deleteManyKeys: 0,
  };
  const proxy = new Proxy(io, {
    get(target, prop) {
      if (prop === 'deleteMany') {
        return async (paths) => {
          let n = 0;
          async function* counted() {
            for await (const p of paths) {
              if (n % 1000 === 0) requests.deleteObjects++;
              n++;
              yield p;
            }
          }
          const r = await target.deleteMany(counted());
          requests.deleteManyKeys += n;
          return r;
        };
      }
      const v = Reflect.get(target, prop);
      if (typeof v !== 'function') return v;
      if (prop in requests) {
        return (...args) => {
          requests[prop]++;
          return v.apply(target, args);
        };
      }
      return v.bind(target);
    },
  });
  return { io: proxy, requests };
}

/** LocalFileIO without fsync for write/createIfAbsent (scratch tables only). */
function fastLocal(io) {
  return new Proxy(io, {
    get(target, prop) {
      if (prop === 'write') {
        return async (p, data) => {
          await mkdir(path.dirname(p), { recursive: true });
          await writeFile(p, data);
        };
      }
      if (prop === 'createIfAbsent') {
        return async (p, data) => {
          await mkdir(path.dirname(p), { recursive: true });
          try {
            await writeFile(p, data, { flag: 'wx' });
            return 'created';
          } catch (e) {
            if (e.code === 'EEXIST') return 'already-exists';
            throw e;
          }
        };
      }
      const v = Reflect.get(target, prop);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

function fileMeta(format, name, size) {
  return format.newDataFileMeta({
    fileName: name,
    fileSize: size,
    rowCount: 1,
    schemaId: 0,
    creationTime: Date.now(),
    deleteRowCount: 0,
    fileSource: 0,
  });
}

/**
 * CPU milliseconds used so far by the S3 server's processes on this machine (radosgw, ceph-osd),
 * read from /proc; null where they are not visible (another machine, not Linux).
 */
async function serverCpuMs() {
  try {
    let ticks = 0;
    let found = false;
    for (const pid of await readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const stat = (await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')).trim();
      const m = /^\d+ \((radosgw|ceph-osd)\) (.*)$/.exec(stat);
      if (!m) continue;
      const f = m[2].split(' ');
      // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after "(comm) ".
      ticks += Number(f[11]) + Number(f[12]);
      found = true;
    }
    return found ? ticks * 10 : null; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

/** CPU milliseconds this process used since `c0` (process.cpuUsage()). */
function cpuMs(c0) {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

async function listAll(dir) {
  const out = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) if (e.isFile()) out.push(path.join(e.parentPath, e.name));
  return out;
}

const tasks = {
  async history({ warehouse, snapshots }) {
    const core = await import('@tidemark/core');
    const format = await import('@tidemark/format');
    const storage = await import('@tidemark/storage');
    const io = fastLocal(new storage.LocalFileIO());
    const catalog = new core.FileSystemCatalog(warehouse, { fileIO: io });
    // ignoreIfExists + continuing after the latest snapshot: an interrupted build resumes.
    const schema = await catalog.createTable(
      'bench.m',
      { fields: [{ name: 'id', type: 'INT' }], options: { bucket: '-1' } },
      { ignoreIfExists: true },
    );
    const table = catalog.tableLocation('bench.m');
    const paths = new core.TablePaths(table);
    const from = ((await new core.SnapshotManager(io, paths).latestId()) ?? 0) + 1;
    const commit = new core.FileStoreCommit(io, paths, schema, { logger: { warn: () => {} } });
    const partition = format.serializeBinaryRow([], []);
    const bucketDir = path.join(table, 'bucket-0');
    await mkdir(bucketDir, { recursive: true });
    const payload = new Uint8Array(64);
    const t0 = performance.now();
    let prev = from > 1 ? fileMeta(format, `data-bench-${from - 1}.parquet`, payload.length) : undefined;
    for (let i = from; i <= snapshots; i++) {
      const name = `data-bench-${i}.parquet`;
      await writeFile(path.join(bucketDir, name), payload);
      const meta = fileMeta(format, name, payload.length);
      const r = await commit.commit(
        {
          identifier: BigInt(i),
          messages: [{ partition, bucket: 0, totalBuckets: -1, newFiles: [meta], ...(prev ? { deletedFiles: [prev] } : {}) }],
        },
        { commitUser: 'bench' },
      );
      if (r.status !== 'committed') throw new Error(`commit ${i}: ${r.status}`);
      prev = meta;
    }
    const buildMs = performance.now() - t0;
    return { table, files: (await listAll(table)).length, buildMs };
  },

  async upload({ dir, target, s3 }) {
    const io = await fileIOFor(target, s3);
    const files = await listAll(dir);
    const t0 = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const f = files[next++];
        await io.write(`${target}/${path.relative(dir, f).split(path.sep).join('/')}`, await readFile(f));
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    await io.close();
    return { objects: files.length, uploadMs: performance.now() - t0 };
  },

  /**
   * The store alone, without table logic: small-object GETs/s at 1, 8 and 32 requests in flight
   * (`gets` objects of 2 KB, each read once per level), then DeleteObjects throughput with 1,000
   * keys per request at 1 and 4 requests in flight (`deleteKeys` fresh objects per level). Objects
   * are written untimed beforehand. The floor that expiration, mostly small reads plus batched
   * deletes, cannot beat.
   */
  async 'store-rate'({ table, s3, gets = 2000, getLevels = [1, 8, 32], deleteKeys = 8000, deleteLevels = [1, 4] }) {
    const io = await fileIOFor(table, s3);
    const dir = `${table.replace(/\/+$/, '')}-store-rate`;
    const pool = async (items, c, fn) => {
      let i = 0;
      await Promise.all(
        Array.from({ length: c }, async () => {
          while (i < items.length) await fn(items[i++]);
        }),
      );
    };
    const body = 'x'.repeat(2000);
    const getPaths = Array.from({ length: gets }, (_, i) => `${dir}/get-${i}`);
    await pool(getPaths, 32, (p) => io.write(p, body));
    const getRates = [];
    for (const inFlight of getLevels) {
      const [c0, s0] = [process.cpuUsage(), s3 ? await serverCpuMs() : null];
      const t0 = performance.now();
      await pool(getPaths, inFlight, (p) => io.read(p));
      const ms = performance.now() - t0;
      const s1 = s3 ? await serverCpuMs() : null;
      getRates.push({
        inFlight,
        gets,
        ms,
        getsPerSec: gets / (ms / 1000),
        clientCpuMs: cpuMs(c0),
        serverCpuMs: s0 === null || s1 === null ? null : s1 - s0,
      });
    }
    await io.deleteMany(getPaths);
    const deleteRates = [];
    for (const inFlight of deleteLevels) {
      const keys = Array.from({ length: deleteKeys }, (_, i) => `${dir}/del-${inFlight}-${i}`);
      await pool(keys, 32, (p) => io.write(p, body));
      const batches = [];
      for (let i = 0; i < keys.length; i += 1000) batches.push(keys.slice(i, i + 1000));
      // One deleteMany per batch, `inFlight` calls at a time: each call sends one DeleteObjects.
      const [c0, s0] = [process.cpuUsage(), s3 ? await serverCpuMs() : null];
      const t0 = performance.now();
      await pool(batches, inFlight, (b) => io.deleteMany(b));
      const ms = performance.now() - t0;
      const s1 = s3 ? await serverCpuMs() : null;
      deleteRates.push({
        inFlight,
        keys: deleteKeys,
        ms,
        keysPerSec: deleteKeys / (ms / 1000),
        clientCpuMs: cpuMs(c0),
        serverCpuMs: s0 === null || s1 === null ? null : s1 - s0,
      });
    }
    await io.close();
    return { getRates, deleteRates };
  },

  async expire({ table, retainMin, s3 }) {
    const core = await import('@tidemark/core');
    const maint = await import('@tidemark/maintenance');
    const base = await fileIOFor(table, s3);
    const { io, requests } = countingRequests(base);
    // Seconds from the start to the first progress event of each phase (where the time goes).
    const phases = {};
    // The server's CPU only where it is the store (its processes run on this machine either way).
    const [c0, s0] = [process.cpuUsage(), s3 ? await serverCpuMs() : null];
    const t0 = performance.now();
    const s = await maint.expireSnapshots(
      { fileIO: io, paths: new core.TablePaths(table) },
      {
        retainMin,
        expireLimit: 1_000_000,
        olderThanMs: Date.now() + 60_000,
        onProgress: (p) => {
          phases[p.phase] ??= (performance.now() - t0) / 1000;
        },
      },
    );
    const ms = performance.now() - t0;
    const [clientCpuMs, s1] = [cpuMs(c0), s3 ? await serverCpuMs() : null];
    await base.close();
    return {
      snapshotsExpired: s.snapshotsExpired,
      filesDeleted: s.filesDeleted,
      bytesFreed: s.bytesFreed,
      ms,
      requests,
      phases,
      clientCpuMs,
      serverCpuMs: s0 === null || s1 === null ? null : s1 - s0,
    };
  },

  async 'orphan-objects'({ table, count, s3, offset = 0 }) {
    const io = await fileIOFor(table, s3);
    const t0 = performance.now();
    let next = 0;
    const payload = new Uint8Array(32);
    const local = !table.startsWith('s3://');
    if (local) await mkdir(path.join(table, 'bucket-0'), { recursive: true });
    const worker = async () => {
      while (next < count) {
        const i = next++;
        const p = `${table}/bucket-0/data-orphan-${offset + i}.parquet`;
        if (local) await writeFile(p, payload);
        else await io.write(p, payload);
      }
    };
    await Promise.all(Array.from({ length: local ? 8 : 32 }, worker));
    await io.close();
    return { objects: count, writeMs: performance.now() - t0 };
  },

  async orphans({ table, s3 }) {
    const core = await import('@tidemark/core');
    const maint = await import('@tidemark/maintenance');
    const io = await fileIOFor(table, s3);
    const t0 = performance.now();
    const s = await maint.removeOrphanFiles({ fileIO: io, paths: new core.TablePaths(table) }, {});
    const ms = performance.now() - t0;
    await io.close();
    return { filesScanned: s.filesScanned, filesDeleted: s.filesDeleted, ms };
  },

  async 'compact-data'({ warehouse, files, rows, s3 }) {
    const core = await import('@tidemark/core');
    const io = await fileIOFor(warehouse, s3);
    const table = await createBenchTable(core, io, warehouse, 'bench.c', {
      fields: columns('id BIGINT', 'name STRING', 'amount DOUBLE'),
      options: { bucket: '-1', 'compaction.min.file-num': '2' },
    });
    const location = table.location;
    let id = 0;
    for (let f = 0; f < files; f++) {
      const batch = Array.from({ length: rows }, () => {
        id++;
        return { id: BigInt(id), name: `name-${id % 997}-${(id * 7919) % 100003}`, amount: (id % 10007) / 7 };
      });
      const r = await table.append(batch);
      if (r.status !== 'committed') throw new Error(`append ${f}: ${r.status}`);
    }
    const plan = await table.newRead().plan();
    const list = plan.files().map((x) => ({ path: x.path, size: x.fileSize }));
    await io.close();
    return { table: location, files: list };
  },

  async compact({ table, s3, timeline: withTimeline, copyRowGroups = false, passDecodedRows = true }) {
    const core = await import('@tidemark/core');
    const maint = await import('@tidemark/maintenance');
    const rawIO = await fileIOFor(table, s3);
    let timeline;
    if (withTimeline) {
      const { ParquetWorkerPool } = await import('@tidemark/format');
      const { startPoolTimeline } = await import('./pool-timeline.mjs');
      timeline = startPoolTimeline(ParquetWorkerPool);
    }
    const io = timeline ? timeline.wrapIO(rawIO) : rawIO;
    const t = await core.openTable(table, { fileIO: io });
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    timeline?.mark('planning');
    // CPU time (all threads) and wall time per phase: where a backend's extra work goes.
    const phases = [];
    const enter = (phase) => {
      const last = phases[phases.length - 1];
      if (last?.phase === phase) return;
      const cpu = process.cpuUsage(c0);
      const at = { phase, cpuAt: (cpu.user + cpu.system) / 1000, msAt: performance.now() - t0 };
      phases.push(at);
    };
    enter('planning');
    const s = await maint.compactAppendTable(t, {
      full: true,
      maxFilesPerRun: 1_000_000,
      ...(copyRowGroups ? { copyRowGroups: true } : {}),
      ...(passDecodedRows ? {} : { passDecodedRows: false }),
      onProgress: (p) => {
        enter(p.phase);
        timeline?.mark(p.phase);
      },
    });
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(c0);
    const phaseCpuMs = {};
    const phaseMs = {};
    phases.forEach((p, i) => {
      const next = phases[i + 1] ?? { cpuAt: (cpu.user + cpu.system) / 1000, msAt: ms };
      phaseCpuMs[p.phase] = next.cpuAt - p.cpuAt;
      phaseMs[p.phase] = next.msAt - p.msAt;
    });
    const timelineSummary = timeline?.stop();
    await rawIO.close();
    const cpuMs = (cpu.user + cpu.system) / 1000; // every thread of the process, workers included
    return {
      filesBefore: s.filesBefore,
      filesAfter: s.filesAfter,
      bytesRead: s.bytesRead,
      bytesWritten: s.bytesWritten,
      rows: s.rows,
      ms,
      cpuMs,
      phaseCpuMs,
      phaseMs,
      ...(timelineSummary ? { timeline: timelineSummary } : {}),
    };
  },

  'raw-rewrite': rawParquetRewrite,
};

await childMain(tasks);
