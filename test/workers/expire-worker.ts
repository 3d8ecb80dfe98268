/**
 * Child process of test/maintenance-kill.test.ts: runs snapshot expiration on one table. Bundled to
 * plain JS by the test before it is spawned. Configuration comes as one JSON argument:
 * `{ root, retainMin, expireLimit, s3?: S3Options, crashAfterDeletes?: number, snapshotBatchSize?: number,
 * crashInSnapshotBatch?: number, crashInChangelogBatch?: number, nowOffsetMs?: number }`. With `crashAfterDeletes = K` the FileIO wrapper deletes K files (a
 * batch is cut in the middle) and then SIGKILLs its own process, so the crash lands exactly between
 * two deletions. With `crashInSnapshotBatch = B` the B-th `deleteMany` of snapshot files deletes a
 * random subset of its paths (a DeleteObjects request has no order) and then SIGKILLs the process;
 * `crashInChangelogBatch = B` does the same to the B-th `deleteMany` of long-lived changelog files.
 * `nowOffsetMs` moves the clock of the run (changelog retention is a time).
 * Prints the summary as one JSON line when it finishes.
 */
import { LocalFileIO, S3FileIO, type FileIO, type S3Options } from '@tidemark/storage';
import { TablePaths } from '@tidemark/core';
import { expireSnapshots } from '@tidemark/maintenance';

interface WorkerConfig {
  readonly root: string;
  readonly retainMin: number;
  readonly expireLimit: number;
  readonly s3?: S3Options;
  readonly crashAfterDeletes?: number;
  readonly snapshotBatchSize?: number;
  readonly crashInSnapshotBatch?: number;
  readonly crashInChangelogBatch?: number;
  readonly nowOffsetMs?: number;
}

/** Counts deletions and dies after `limit` of them. */
function crashing(io: FileIO, limit: number): FileIO {
  let deleted = 0;
  const die = (): never => {
    process.kill(process.pid, 'SIGKILL');
    throw new Error('unreachable');
  };
  return new Proxy(io, {
    get(target, prop, receiver) {
      if (prop === 'delete') {
        return async (path: string) => {
          if (deleted >= limit) die();
          await target.delete(path);
          deleted++;
        };
      }
      if (prop === 'deleteMany') {
        return async (paths: Iterable<string> | AsyncIterable<string>) => {
          const all: string[] = [];
          for await (const p of paths as AsyncIterable<string>) all.push(p);
          const room = limit - deleted;
          if (room <= 0) die();
          if (all.length > room) {
            await target.deleteMany(all.slice(0, room));
            deleted += room;
            die();
          }
          deleted += all.length;
          return target.deleteMany(all);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** Cuts the `batch`-th deleteMany of files named by `pattern`: deletes a random non-empty, incomplete subset, then dies. */
function cuttingBatch(io: FileIO, batch: number, pattern: RegExp): FileIO {
  let seen = 0;
  return new Proxy(io, {
    get(target, prop, receiver) {
      if (prop === 'deleteMany') {
        return async (paths: Iterable<string> | AsyncIterable<string>) => {
          const all: string[] = [];
          for await (const p of paths as AsyncIterable<string>) all.push(p);
          if (all.length > 1 && all.some((p) => pattern.test(p)) && ++seen === batch) {
            for (let i = all.length - 1; i > 0; i--) {
              const j = Math.floor(Math.random() * (i + 1));
              [all[i], all[j]] = [all[j]!, all[i]!];
            }
            const cut = all.slice(0, 1 + Math.floor(Math.random() * (all.length - 1)));
            await target.deleteMany(cut);
            process.stderr.write(`cut: ${JSON.stringify(cut)}\n`);
            process.kill(process.pid, 'SIGKILL');
          }
          return target.deleteMany(all);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
  const base: FileIO = config.s3 ? new S3FileIO(config.s3) : new LocalFileIO();
  let io = config.crashAfterDeletes !== undefined ? crashing(base, config.crashAfterDeletes) : base;
  if (config.crashInSnapshotBatch !== undefined) io = cuttingBatch(io, config.crashInSnapshotBatch, /\/snapshot\/snapshot-\d+$/);
  if (config.crashInChangelogBatch !== undefined) io = cuttingBatch(io, config.crashInChangelogBatch, /\/changelog\/changelog-\d+$/);
  const offset = config.nowOffsetMs ?? 0;
  process.stderr.write('ready\n');
  const summary = await expireSnapshots(
    { fileIO: io, paths: new TablePaths(config.root) },
    {
      retainMin: config.retainMin,
      expireLimit: config.expireLimit,
      olderThanMs: Date.now() + offset + 60_000,
      ...(offset !== 0 ? { now: () => Date.now() + offset } : {}),
      ...(config.snapshotBatchSize !== undefined ? { snapshotBatchSize: config.snapshotBatchSize } : {}),
    },
  );
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  await base.close();
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
