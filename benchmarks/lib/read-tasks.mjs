/**
 * Child-process tasks of the read benchmark (`node read-tasks.mjs <task> <json args>`); each run
 * measures one thing in a fresh process. See lib/measure.mjs for the protocol.
 *
 * Tasks:
 * - `plan`: tidemark scan planning of the latest snapshot (openTable + newRead().plan()).
 * - `plan-warm`: the same planned twice in one process, the second measured: JIT done, heap grown,
 *   lazily loaded modules (the zstd binding) in place, i.e. planning without a fresh process's
 *   cold start.
 * - `plan-limits`: the floors under planning, on the manifest bytes already in memory: zstd
 *   decompression of every Avro block alone, decompression plus a walk over every entry's bytes
 *   (every entry dropped at its partition, so no object is built), decoding every entry without
 *   folding or grouping, the same keeping every entry (as a plan must), `v8.deserialize` of the
 *   decoded entries (what receiving them from a worker thread by `postMessage` costs), the zstd
 *   binding on the bare frames; and, when the `zstd` command is installed, the same zstd frames
 *   decompressed by it.
 * - `read-tidemark`: full read through `newRead().batches()`.
 * - `read-duckdb`: DuckDB `read_parquet([...live files])`, aggregating every column so every
 *   column is decoded (the result is not materialised in JS).
 * - `read-parquet-wasm`: each live file read with `fs.readFile` + parquet-wasm `readParquet`
 *   (one batch per file) + IPC into an apache-arrow Table, i.e. the raw decode path without any
 *   table logic.
 *
 * Every read task returns `rows` and `idSum` (sum of the `id` column), so the parent can check
 * that all readers saw the same data.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import v8 from 'node:v8';

import { childMain, rssMiB } from './measure.mjs';
import { sumInt64 } from './stats.mjs';

async function livePaths(listFile, limit) {
  const all = (await readFile(listFile, 'utf8')).split('\n').filter(Boolean);
  return limit !== undefined && all.length > limit ? all.slice(0, limit) : all;
}

/**
 * Files and rows of a plan, whatever container shape `plan()` returns. A plan that counts its
 * files and rows without decoding them is asked so (decoding them would make objects the plan does
 * not keep, and the retained-memory figure is the plan's own).
 */
function summarisePlan(plan) {
  const splits = Array.isArray(plan) ? plan : (plan.splits ?? []);
  if (typeof plan.fileCount === 'number' && typeof plan.rowCount === 'number') {
    return { splits: splits.length, files: plan.fileCount, rows: plan.rowCount };
  }
  let files = 0;
  let rows = 0;
  for (const split of splits) {
    const list = split.dataFiles ?? split.files ?? [];
    files += list.length;
    for (const f of list) rows += Number((f.meta ?? f.file ?? f).rowCount ?? 0);
  }
  return { splits: splits.length, files, rows };
}

/** The zstd frames of every Avro block of `files`, or null when a file uses another codec. */
async function zstdFrames(format, files) {
  const frames = [];
  for (const f of files) {
    const header = await format.readAvroHeader(f, { path: 'manifest' });
    if (header.codec !== 'zstandard') return null;
    // Container framing: header, then per block a zigzag varint count and size, the data, the sync marker.
    let pos = f.indexOf(Buffer.from(header.syncMarker)) + 16;
    const varint = () => {
      let n = 0;
      let mul = 1;
      let b;
      do {
        b = f[pos++];
        n += (b & 0x7f) * mul;
        mul *= 128;
      } while (b & 0x80);
      return n / 2;
    };
    while (pos < f.length) {
      varint();
      const size = varint();
      frames.push(f.subarray(pos, pos + size));
      pos += size + 16;
    }
  }
  return frames;
}

/**
 * Wall time of the `zstd` command decompressing every block's zstd frame of `files` (concatenated
 * into one file, output discarded), or null without the command or for other codecs.
 */
async function zstdCliTime(format, files) {
  if (spawnSync('zstd', ['--version']).status !== 0) return null;
  const frames = await zstdFrames(format, files);
  if (frames === null) return null;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tidemark-zstd-'));
  try {
    const file = path.join(dir, 'frames.zst');
    await writeFile(file, Buffer.concat(frames));
    const t0 = performance.now();
    const run = spawnSync('zstd', ['-d', '-c', '-q', file], { maxBuffer: 2 ** 31 - 1, stdio: ['ignore', 'ignore', 'ignore'] });
    const ms = performance.now() - t0;
    return run.status === 0 ? ms : null;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * CPU time of the main thread alone (ms), from Linux's per-thread scheduler statistics; null
 * where they are not readable. The process's CPU time also counts zstd in the libuv pool, the
 * collector's helper threads and background JIT compilation.
 */
function mainThreadCpuMs() {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}

/** Records the collector's pauses; `pauses(from, to)` sums those that started in that window. */
function gcPauses() {
  const entries = [];
  const observer = new PerformanceObserver((list) => entries.push(...list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return {
    // GC entries arrive asynchronously: wait for them before summing.
    async pauses(from, to) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      observer.disconnect();
      const gc = { minorMs: 0, majorMs: 0, count: 0 };
      for (const e of entries) {
        if (e.startTime < from || e.startTime > to) continue;
        gc.count++;
        if (e.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) gc.minorMs += e.duration;
        else gc.majorMs += e.duration;
      }
      return gc;
    },
  };
}

async function loadCore() {
  const core = await import('@tidemark/core');
  if (typeof core.openTable !== 'function') throw new Error('@tidemark/core has no openTable export (engine not built yet)');
  return core;
}

const tasks = {
  async plan({ root }) {
    const core = await loadCore();
    globalThis.gc?.();
    const baseRssMiB = rssMiB();
    const baseHeapMiB = process.memoryUsage().heapUsed / 2 ** 20;
    const baseArrayBuffersMiB = process.memoryUsage().arrayBuffers / 2 ** 20;
    // Native buffers (e.g. zstd output a plan may keep) count in `external`, not in `arrayBuffers`.
    const baseExternalMiB = process.memoryUsage().external / 2 ** 20;
    const t0 = performance.now();
    const table = await core.openTable(root);
    const t1 = performance.now();
    // Collector pauses during plan(): the share of planning spent on the objects a plan keeps.
    const gcEntries = [];
    const gcObserver = new PerformanceObserver((list) => gcEntries.push(...list.getEntries()));
    gcObserver.observe({ entryTypes: ['gc'] });
    // CPU time of all the process's threads (main, zstd in the libuv pool, GC helpers): on a
    // shared machine it moves less with other jobs' load than the wall time does.
    const cpu0 = process.cpuUsage();
    const main0 = mainThreadCpuMs();
    const plan = await table.newRead({}).plan();
    const main1 = mainThreadCpuMs();
    const cpu = process.cpuUsage(cpu0);
    const t2 = performance.now();
    const summary = summarisePlan(plan);
    // Heap still held once planning is over: the plan itself (O(live files) by nature). Array
    // buffers (byte rows kept outside the JS heap) are counted separately.
    globalThis.gc?.();
    const mem = process.memoryUsage();
    const retainedHeapMiB = mem.heapUsed / 2 ** 20 - baseHeapMiB;
    const retainedArrayBuffersMiB = mem.arrayBuffers / 2 ** 20 - baseArrayBuffersMiB;
    const retainedExternalMiB = mem.external / 2 ** 20 - baseExternalMiB;
    // GC entries arrive asynchronously: wait for them (after the memory figures, which the wait
    // would change), then count the pauses that started within plan().
    await new Promise((resolve) => setTimeout(resolve, 20));
    gcObserver.disconnect();
    const gc = { minorMs: 0, majorMs: 0, count: 0 };
    for (const e of gcEntries) {
      if (e.startTime < t1 || e.startTime > t2) continue;
      gc.count++;
      if (e.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) gc.minorMs += e.duration;
      else gc.majorMs += e.duration;
    }
    return {
      openMs: t1 - t0,
      planMs: t2 - t1,
      planCpuMs: (cpu.user + cpu.system) / 1000,
      planMainCpuMs: main0 === null || main1 === null ? null : main1 - main0,
      gcMinorMs: gc.minorMs,
      gcMajorMs: gc.majorMs,
      gcCount: gc.count,
      ...summary,
      baseRssMiB,
      retainedHeapMiB,
      retainedArrayBuffersMiB,
      retainedExternalMiB,
      keepAlive: plan ? 1 : 0,
    };
  },

  async 'plan-warm'({ root }) {
    const core = await loadCore();
    // The first plan is dropped before the second (no variable holds it).
    const firstFiles = summarisePlan(await (await core.openTable(root)).newRead({}).plan()).files;
    globalThis.gc?.();
    const table = await core.openTable(root);
    const gc = gcPauses();
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const main0 = mainThreadCpuMs();
    const plan = await table.newRead({}).plan();
    const main1 = mainThreadCpuMs();
    const cpu = process.cpuUsage(cpu0);
    const t1 = performance.now();
    const pauses = await gc.pauses(t0, t1);
    return {
      planMs: t1 - t0,
      planCpuMs: (cpu.user + cpu.system) / 1000,
      planMainCpuMs: main0 === null || main1 === null ? null : main1 - main0,
      gcMinorMs: pauses.minorMs,
      gcMajorMs: pauses.majorMs,
      ...summarisePlan(plan),
      firstFiles,
    };
  },

  async 'plan-limits'({ root }) {
    const format = await import('@tidemark/format');
    const dir = path.join(root, 'manifest');
    const names = (await readdir(dir)).filter((n) => n.startsWith('manifest-') && !n.startsWith('manifest-list-')).sort();
    const files = await Promise.all(names.map((n) => readFile(path.join(dir, n))));
    const compressedBytes = files.reduce((s, f) => s + f.length, 0);
    const cpuMs = (since) => {
      const c = process.cpuUsage(since);
      return (c.user + c.system) / 1000;
    };
    let cpu0 = process.cpuUsage();
    let t0 = performance.now();
    let entries = 0;
    let blocks = 0;
    let decompressedBytes = 0;
    for (const f of files) {
      for await (const b of format.readAvroBlocks(f, { path: 'manifest' })) {
        blocks++;
        entries += b.count;
        decompressedBytes += b.data.length;
      }
    }
    const decompressMs = performance.now() - t0;
    const decompressCpuMs = cpuMs(cpu0);
    cpu0 = process.cpuUsage();
    t0 = performance.now();
    let walked = 0;
    const dropAll = {
      partition: () => {
        walked++;
        return undefined;
      },
    };
    for (const f of files) for await (const batch of format.decodeManifestEntryBatches(f, 'manifest', dropAll)) walked += batch.length;
    const walkMs = performance.now() - t0;
    const walkCpuMs = cpuMs(cpu0);
    cpu0 = process.cpuUsage();
    t0 = performance.now();
    let decoded = 0;
    const arena = new format.ByteArena();
    for (const f of files) {
      for await (const batch of format.decodeManifestEntryBatches(f, 'manifest', { copyBytes: false, lazyStats: true, arena })) {
        decoded += batch.length;
      }
    }
    const decodeMs = performance.now() - t0;
    const decodeCpuMs = cpuMs(cpu0);
    // Decoding as above but keeping every entry, as a plan must: the collector then copies and
    // marks what survives instead of dropping young garbage.
    cpu0 = process.cpuUsage();
    const kept = [];
    const keepArena = new format.ByteArena();
    for (const f of files) {
      for await (const batch of format.decodeManifestEntryBatches(f, 'manifest', { copyBytes: false, lazyStats: true, arena: keepArena })) {
        for (const e of batch) kept.push(e);
      }
    }
    const decodeKeepCpuMs = cpuMs(cpu0);
    if (walked !== entries || decoded !== entries || kept.length !== entries) {
      throw new Error(`entries: ${entries} in blocks, ${walked} walked, ${decoded} decoded, ${kept.length} kept`);
    }
    // What a worker thread handing decoded entries back would cost the main thread: postMessage
    // clones with V8's serializer, and the receiving side runs the deserializer over every object.
    const plainStats = (st) => ({ minValues: st.minValues, maxValues: st.maxValues, nullCounts: st.nullCounts });
    // (At most 110k entries: the serialized copy of a million would take gigabytes for one rate.)
    const cloneEntries = Math.min(kept.length, 110_000);
    const wire = v8.serialize(
      kept
        .slice(0, cloneEntries)
        .map((e) => ({ ...e, file: { ...e.file, keyStats: plainStats(e.file.keyStats), valueStats: plainStats(e.file.valueStats) } })),
    );
    kept.length = 0;
    cpu0 = process.cpuUsage();
    const cloned = v8.deserialize(wire);
    const cloneInCpuMs = cpuMs(cpu0);
    if (cloned.length !== cloneEntries) throw new Error(`cloned ${cloned.length} of ${cloneEntries} entries`);
    // The zstd binding on the bare frames, one at a time as planning awaits them (no container
    // parsing): the same input as the zstd command below.
    const frames = await zstdFrames(format, files);
    let zstdBindingCpuMs = null;
    if (frames !== null) {
      const mod = await import('@mongodb-js/zstd');
      const zstd = mod.default ?? mod;
      cpu0 = process.cpuUsage();
      for (const fr of frames) await zstd.decompress(fr);
      zstdBindingCpuMs = cpuMs(cpu0);
    }
    const zstdCliMs = await zstdCliTime(format, files);
    return {
      manifests: files.length,
      blocks,
      entries,
      compressedBytes,
      decompressedBytes,
      decompressMs,
      walkMs,
      decodeMs,
      decompressCpuMs,
      walkCpuMs,
      decodeCpuMs,
      decodeKeepCpuMs,
      cloneInCpuMs,
      cloneEntries,
      zstdBindingCpuMs,
      zstdCliMs,
    };
  },

  async 'read-tidemark'({ root }) {
    const core = await loadCore();
    const baseRssMiB = rssMiB();
    const t0 = performance.now();
    const table = await core.openTable(root);
    let rows = 0;
    let batches = 0;
    let idSum = 0n;
    for await (const batch of table.newRead({}).batches()) {
      rows += batch.numRows;
      batches++;
      idSum += sumInt64(batch.getChild('id'));
    }
    const ms = performance.now() - t0;
    return { ms, rows, batches, idSum: idSum.toString(), baseRssMiB };
  },

  async 'read-duckdb'({ liveFilesList, limit }) {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const paths = await livePaths(liveFilesList, limit);
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    const threads = (await conn.runAndReadAll(`SELECT current_setting('threads')`)).getRows()[0][0];
    const baseRssMiB = rssMiB();
    const list = `[${paths.map((p) => `'${p.replaceAll("'", "''")}'`).join(',')}]`;
    const t0 = performance.now();
    const reader = await conn.runAndReadAll(
      `SELECT count(*), sum(id), sum(length(name)), sum(amount), max(ts), sum(p) FROM read_parquet(${list})`,
    );
    const ms = performance.now() - t0;
    const row = reader.getRows()[0];
    return { ms, rows: Number(row[0]), idSum: String(row[1]), files: paths.length, threads: Number(threads), baseRssMiB };
  },

  async 'read-parquet-wasm'({ liveFilesList, limit }) {
    const pw = await import('parquet-wasm');
    const arrow = await import('apache-arrow');
    const paths = await livePaths(liveFilesList, limit);
    const baseRssMiB = rssMiB();
    const t0 = performance.now();
    let rows = 0;
    let idSum = 0n;
    for (const p of paths) {
      const bytes = await readFile(p);
      const wasmTable = pw.readParquet(bytes, { batchSize: 1 << 20 });
      const table = arrow.tableFromIPC(wasmTable.intoIPCStream());
      rows += table.numRows;
      idSum += sumInt64(table.getChild('id'));
    }
    const ms = performance.now() - t0;
    return { ms, rows, idSum: idSum.toString(), files: paths.length, baseRssMiB };
  },
};

await childMain(tasks);
