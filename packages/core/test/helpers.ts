import { MemoryFileIO, type FileIO, type FileStatus, type ListOptions } from '@tidemark/storage';
import { serializeSnapshot, type Snapshot } from '@tidemark/format';
import { TablePaths } from '../src/table-paths.js';
import { seededRandom as seededUnit } from '../../../test/support/seeded-random.mjs';
import { instrumentFileIO } from '../../../test/support/instrumented-file-io.mjs';

let counter = 0;

/** A fresh in-memory table root. */
export function memoryRoot(): string {
  counter++;
  return `memory://core-test-${process.pid}-${counter}/wh/default.db/t`;
}

export function makeSnapshot(id: number, timeMillis: number): Snapshot {
  return {
    version: 3,
    id,
    schemaId: 0,
    baseManifestList: `manifest-list-base-${id}`,
    deltaManifestList: `manifest-list-delta-${id}`,
    commitUser: 'test-user',
    commitIdentifier: 9223372036854775807n,
    commitKind: 'APPEND',
    timeMillis,
    totalRecordCount: id,
    deltaRecordCount: 1,
  };
}

/** Writes snapshots `ids` (timeMillis = 1000 * id unless given) and optional hints. */
export async function writeSnapshots(
  io: FileIO,
  paths: TablePaths,
  ids: Iterable<number>,
  opts: { latest?: string; earliest?: string; time?: (id: number) => number } = {},
): Promise<void> {
  for (const id of ids) {
    await io.write(paths.snapshotPath(id), serializeSnapshot(makeSnapshot(id, opts.time ? opts.time(id) : 1000 * id)));
  }
  if (opts.latest !== undefined) await io.write(paths.latestHint, opts.latest);
  if (opts.earliest !== undefined) await io.write(paths.earliestHint, opts.earliest);
}

export function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i <= to; i++) out.push(i);
  return out;
}

/** A FileIO that counts list() and exists() calls (to check that hints are used). */
export class CountingFileIO implements FileIO {
  readonly kind: string;
  lists = 0;
  existsCalls = 0;

  constructor(private readonly inner: FileIO = new MemoryFileIO()) {
    this.kind = inner.kind;
  }
  read(p: string) {
    return this.inner.read(p);
  }
  readRange(p: string, o: number, l: number) {
    return this.inner.readRange(p, o, l);
  }
  stat(p: string) {
    return this.inner.stat(p);
  }
  exists(p: string) {
    this.existsCalls++;
    return this.inner.exists(p);
  }
  write(p: string, d: Uint8Array | string) {
    return this.inner.write(p, d);
  }
  createIfAbsent(p: string, d: Uint8Array | string) {
    return this.inner.createIfAbsent(p, d);
  }
  delete(p: string) {
    return this.inner.delete(p);
  }
  deleteMany(p: Iterable<string> | AsyncIterable<string>) {
    return this.inner.deleteMany(p);
  }
  list(dir: string, options?: ListOptions): AsyncIterable<FileStatus> {
    this.lists++;
    return this.inner.list(dir, options);
  }
  close() {
    return this.inner.close();
  }
}

export { TablePaths };

/** A seeded pseudo-random integer generator (the shared mulberry32): `rand(n)` is in [0, n). */
export function seededRandom(seed: number): (n: number) => number {
  const next = seededUnit(seed);
  return (n: number): number => Math.floor(next() * n);
}

/** A request as {@link countingRequests} sees it. */
export interface CountedRequest {
  readonly kind: string;
  readonly path?: string;
}

/**
 * A FileIO counting requests under the key `keyOf` gives each (and `roundTrips`: requests issued
 * while none was in flight); `take()` returns the counts since the last call. `latencyMs` delays
 * every request, so that requests issued together overlap as on an object store.
 */
export function countingRequests(
  inner: FileIO,
  keyOf: (request: CountedRequest) => string,
  latencyMs = 0,
): { io: FileIO; take(): Record<string, number> } {
  let counts: Record<string, number> = {};
  const io = instrumentFileIO(inner, {
    latencyMs,
    start(request) {
      const key = keyOf(request);
      counts[key] = (counts[key] ?? 0) + 1;
      if (request.newRoundTrip) counts.roundTrips = (counts.roundTrips ?? 0) + 1;
    },
  });
  return {
    io,
    take: () => {
      const c = counts;
      counts = {};
      return c;
    },
  };
}
