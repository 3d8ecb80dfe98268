/**
 * One conformance suite for the FileIO contract (packages/storage/src/file-io.ts), run unchanged
 * against every backend: memory, a local temp dir and the real S3 server (Ceph RGW, started by
 * `npm test`). On S3 it also checks what only a network store has: list paging past 1,000 keys,
 * DeleteObjects batching, multipart uploads, and a conditional PUT whose reply is lost.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  InvalidRangeError,
  LocalFileIO,
  MemoryFileIO,
  NotFoundError,
  S3FileIO,
  joinPath,
  resolveFileIO,
  type FileIO,
  type FileStatus,
} from '@tidemark/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForwardingProxy } from './support/forwarding-proxy.mjs';
import { s3Available, s3TestBucket, s3TestEnv, s3TestOptions, uniquePrefix } from './support/s3.js';

interface Backend {
  readonly name: string;
  readonly kind: string;
  readonly available: boolean;
  /** Creates the FileIO and an empty root location that belongs to this suite alone. */
  open(): Promise<{ io: FileIO; root: string; cleanup: () => Promise<void> }>;
}

/** An SDK client of the test server, outside S3FileIO. */
function sdkClient(): S3Client {
  const env = s3TestEnv()!;
  return new S3Client({
    endpoint: env.endpoint,
    region: env.region,
    forcePathStyle: true,
    credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
  });
}

const backends: Backend[] = [
  {
    name: 'memory',
    kind: 'memory',
    available: true,
    async open() {
      const store = `conformance-${randomUUID()}`;
      return { io: new MemoryFileIO(), root: `memory://${store}/root`, cleanup: async () => MemoryFileIO.clear(store) };
    },
  },
  {
    name: 'local',
    kind: 'local',
    available: true,
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'tidemark-conformance-'));
      return { io: new LocalFileIO(), root: dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 's3',
    kind: 's3',
    available: s3Available('storage conformance on S3'),
    async open() {
      const io = new S3FileIO(s3TestOptions());
      const root = `s3://${s3TestBucket()}/${uniquePrefix('conformance')}`;
      return {
        io,
        root,
        cleanup: async () => {
          await io.deleteMany(paths(io.list(root)));
          await io.close();
        },
      };
    },
  },
  {
    // An injected client takes every request through S3Client.send: the path AWS itself uses, which
    // the S3 backend above (a path-style endpoint, single-object requests sent directly) does not.
    name: 's3 through the SDK client',
    kind: 's3',
    available: s3Available('storage conformance on S3 through the SDK client'),
    async open() {
      const client = sdkClient();
      const io = new S3FileIO(s3TestOptions(), { client });
      const root = `s3://${s3TestBucket()}/${uniquePrefix('conformance-sdk')}`;
      return {
        io,
        root,
        cleanup: async () => {
          try {
            await io.deleteMany(paths(io.list(root)));
            await io.close();
          } finally {
            client.destroy();
          }
        },
      };
    },
  },
];

async function collect(it: AsyncIterable<FileStatus>): Promise<FileStatus[]> {
  const out: FileStatus[] = [];
  for await (const s of it) out.push(s);
  return out;
}

async function* paths(it: AsyncIterable<FileStatus>): AsyncIterable<string> {
  for await (const s of it) yield s.path;
}

const sortedPaths = (list: FileStatus[]) => list.map((s) => s.path).sort();
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** Runs `fn` over `items` with at most `limit` in flight. */
async function parallel<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function expectRejects<E extends Error>(p: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected a ${type.name}`).toBeInstanceOf(type);
  return err as E;
}

for (const backend of backends) {
  describe.skipIf(!backend.available)(`FileIO conformance: ${backend.name}`, () => {
    let io: FileIO;
    let root: string;
    let cleanup: () => Promise<void>;
    /** A fresh directory for one test. */
    const dir = (name: string) => joinPath(root, `${name}-${randomBytes(3).toString('hex')}`);

    beforeAll(async () => {
      ({ io, root, cleanup } = await backend.open());
    });
    afterAll(async () => {
      await cleanup?.();
    });

    it('reports its kind, and resolveFileIO picks the same backend for the location', async () => {
      expect(io.kind).toBe(backend.kind);
      const resolved = resolveFileIO(root, backend.kind === 's3' ? { s3: s3TestOptions() } : {});
      try {
        expect(resolved.kind).toBe(backend.kind);
        const p = joinPath(dir('resolve'), 'x.bin');
        await io.write(p, 'via the first instance');
        expect(text(await resolved.read(p))).toBe('via the first instance');
      } finally {
        await resolved.close();
      }
    });

    it('writes and reads back bytes and strings; overwrite replaces the whole object', async () => {
      const d = dir('rw');
      const bin = joinPath(d, 'data.bin');
      const bytes = randomBytes(4096);
      await io.write(bin, bytes);
      expect(Buffer.from(await io.read(bin)).equals(bytes)).toBe(true);

      const str = joinPath(d, 'text.json');
      await io.write(str, '{"snapshot":1,"note":"héllo ✓"}');
      expect(text(await io.read(str))).toBe('{"snapshot":1,"note":"héllo ✓"}');
      expect((await io.stat(str)).size).toBe(Buffer.byteLength('{"snapshot":1,"note":"héllo ✓"}'));

      // A shorter overwrite must not leave the old tail behind.
      await io.write(bin, 'short');
      expect(text(await io.read(bin))).toBe('short');
      expect((await io.stat(bin)).size).toBe(5);

      const empty = joinPath(d, 'empty');
      await io.write(empty, new Uint8Array(0));
      expect((await io.read(empty)).length).toBe(0);
      expect((await io.stat(empty)).size).toBe(0);
      expect(await io.exists(empty)).toBe(true);
    });

    it('stores exactly the bytes of a Uint8Array view (byteOffset != 0), and copies them', async () => {
      const p = joinPath(dir('view'), 'view.bin');
      const backing = randomBytes(100);
      const view = new Uint8Array(backing.buffer, backing.byteOffset + 10, 20);
      const expected = Buffer.from(view); // copy before mutation
      await io.write(p, view);
      view.fill(0); // mutating the caller's buffer afterwards must not change the stored object
      const got = await io.read(p);
      expect(got.length).toBe(20);
      expect(Buffer.from(got).equals(expected)).toBe(true);
    });

    it('stat gives size and a recent modification time; exists tells present from missing', async () => {
      const p = joinPath(dir('stat'), 'a.bin');
      expect(await io.exists(p)).toBe(false);
      await io.write(p, randomBytes(1234));
      const st = await io.stat(p);
      expect(st.size).toBe(1234);
      expect(st.path).toBe(p);
      expect(st.lastModified).toBeInstanceOf(Date);
      // Same machine, so the clocks agree to well within an hour (sanity, not a speed check).
      expect(Math.abs(st.lastModified.getTime() - Date.now())).toBeLessThan(3_600_000);
      expect(await io.exists(p)).toBe(true);
    });

    it('a missing object gives NotFoundError from read, stat and readRange; delete of it is fine', async () => {
      const p = joinPath(dir('missing'), 'nope.bin');
      expect((await expectRejects(io.read(p), NotFoundError)).path).toBe(p);
      expect((await expectRejects(io.stat(p), NotFoundError)).path).toBe(p);
      expect((await expectRejects(io.readRange(p, 0, 10), NotFoundError)).path).toBe(p);
      expect(await io.exists(p)).toBe(false);
      await expect(io.delete(p)).resolves.toBeUndefined();
    });

    it('readRange returns the bytes asked for, cuts at the end, and rejects a start at or past the end', async () => {
      const p = joinPath(dir('range'), 'r.bin');
      const bytes = randomBytes(1000);
      await io.write(p, bytes);
      expect(Buffer.from(await io.readRange(p, 0, 10)).equals(bytes.subarray(0, 10))).toBe(true);
      expect(Buffer.from(await io.readRange(p, 123, 456)).equals(bytes.subarray(123, 579))).toBe(true);
      expect(Buffer.from(await io.readRange(p, 999, 1)).equals(bytes.subarray(999))).toBe(true);
      // Runs past the end: cut at the end.
      expect(Buffer.from(await io.readRange(p, 990, 100)).equals(bytes.subarray(990))).toBe(true);
      // Starts at or past the end.
      await expectRejects(io.readRange(p, 1000, 1), InvalidRangeError);
      await expectRejects(io.readRange(p, 5000, 10), InvalidRangeError);
      // Negative arguments are invalid too.
      await expectRejects(io.readRange(p, -1, 10), InvalidRangeError);
      // An empty range inside the object is just empty.
      expect((await io.readRange(p, 10, 0)).length).toBe(0);
    });

    it('lists recursively by default and only direct children with recursive: false', async () => {
      const d = dir('list');
      const files: Record<string, number> = { '1.bin': 1, '2.bin': 2, 'b/3.bin': 3, 'b/c/4.bin': 4 };
      for (const [rel, size] of Object.entries(files)) await io.write(joinPath(d, rel), randomBytes(size));
      // Siblings that share the name prefix must not leak into the listing of `d`.
      await io.write(`${d}x/not-mine.bin`, 'x');
      await io.write(joinPath(`${d}-other`, 'not-mine.bin'), 'x');

      const all = await collect(io.list(d));
      expect(sortedPaths(all)).toEqual(
        Object.keys(files)
          .map((rel) => joinPath(d, rel))
          .sort(),
      );
      for (const s of all) {
        const rel = Object.keys(files).find((r) => joinPath(d, r) === s.path)!;
        expect(s.size).toBe(files[rel]);
        expect(s.lastModified).toBeInstanceOf(Date);
      }
      expect(sortedPaths(await collect(io.list(d, { recursive: true })))).toEqual(sortedPaths(all));

      const direct = await collect(io.list(d, { recursive: false }));
      expect(sortedPaths(direct)).toEqual([joinPath(d, '1.bin'), joinPath(d, '2.bin')]);

      const sub = await collect(io.list(joinPath(d, 'b'), { recursive: false }));
      expect(sortedPaths(sub)).toEqual([joinPath(d, 'b/3.bin')]);

      // The same directory with a trailing slash lists the same files.
      expect(sortedPaths(await collect(io.list(`${d}/`)))).toEqual(sortedPaths(all));
    });

    it('keys with spaces, + and %, quotes, XML characters, non-ASCII and partition names round-trip through every call', async () => {
      const d = dir('odd-keys');
      // Each name is its own content, so a read of the wrong key shows.
      const names = ['a b', ' lead', 'trail ', 'plus+sign', 'pct%20x', 'ü-ñ-日本', "q'(x)*!", 'amp&lt;<>"', 'dt=2024-01-01/x', '007'];
      for (const n of names) await io.write(joinPath(d, n), n);
      for (const n of names) {
        expect(new TextDecoder().decode(await io.read(joinPath(d, n))), n).toBe(n);
        expect((await io.stat(joinPath(d, n))).size, n).toBe(Buffer.byteLength(n));
      }
      expect(sortedPaths(await collect(io.list(d)))).toEqual(names.map((n) => joinPath(d, n)).sort());
      expect(sortedPaths(await collect(io.list(d, { recursive: false })))).toEqual(
        names
          .filter((n) => !n.includes('/'))
          .map((n) => joinPath(d, n))
          .sort(),
      );
      expect(await io.createIfAbsent(joinPath(d, 'c k+%'), 'x')).toBe('created');
      expect(await io.createIfAbsent(joinPath(d, 'c k+%'), 'y')).toBe('already-exists');
      for (const n of [...names, 'c k+%']) await io.delete(joinPath(d, n));
      expect(await collect(io.list(d))).toEqual([]);
    });

    it('lists a missing directory, and one whose files were all deleted, as empty', async () => {
      const d = dir('empty-list');
      expect(await collect(io.list(d))).toEqual([]);
      expect(await collect(io.list(d, { recursive: false }))).toEqual([]);
      const p = joinPath(d, 'sub/only.bin');
      await io.write(p, 'x');
      await io.delete(p);
      expect(await io.exists(p)).toBe(false);
      expect(await collect(io.list(d))).toEqual([]);
      expect(await collect(io.list(d, { recursive: false }))).toEqual([]);
    });

    it('lists more than 1,000 entries (S3 pages at 1,000), recursive and not', { timeout: 180_000 }, async () => {
      const d = dir('paging');
      const top = Array.from({ length: 1050 }, (_, i) => joinPath(d, `k-${String(i).padStart(5, '0')}`));
      const nested = Array.from({ length: 60 }, (_, i) => joinPath(d, `sub/n-${i}`));
      await parallel([...top, ...nested], 32, (p) => io.write(p, p));
      const all = await collect(io.list(d));
      expect(all.length).toBe(1110);
      expect(new Set(all.map((s) => s.path))).toEqual(new Set([...top, ...nested]));
      const direct = await collect(io.list(d, { recursive: false }));
      expect(new Set(direct.map((s) => s.path))).toEqual(new Set(top));
      expect(direct.length).toBe(1050);
    });

    it('deleteMany removes 2,500 paths given as a stream, including missing ones', { timeout: 180_000 }, async () => {
      const d = dir('delete-many');
      const existing = Array.from({ length: 1250 }, (_, i) => joinPath(d, `e/${i}.bin`));
      const missing = Array.from({ length: 1250 }, (_, i) => joinPath(d, `m/${i}.bin`));
      await parallel(existing, 32, (p) => io.write(p, 'x'));
      const keep = joinPath(d, 'keep.bin');
      await io.write(keep, 'keep');
      async function* interleaved() {
        for (let i = 0; i < 1250; i++) {
          yield existing[i]!;
          yield missing[i]!;
        }
      }
      expect(await io.deleteMany(interleaved())).toBe(2500);
      expect(sortedPaths(await collect(io.list(d)))).toEqual([keep]);
      // A plain array works too, and an empty input is a no-op.
      expect(await io.deleteMany([keep])).toBe(1);
      expect(await io.deleteMany([])).toBe(0);
      expect(await io.exists(keep)).toBe(false);
    });

    it(
      'deleteMany streams more batches than it keeps in flight (6,200 paths) and passes on an error of its input',
      { timeout: 180_000 },
      async () => {
        const d = dir('delete-many-window');
        // 1,200 objects spread over 6,200 paths, so every 1,000-key batch holds some that exist.
        const existing = new Set(Array.from({ length: 1200 }, (_, i) => Math.floor((i * 6200) / 1200)));
        const all = Array.from({ length: 6200 }, (_, i) => joinPath(d, `${existing.has(i) ? 'e' : 'm'}/${i}.bin`));
        await parallel(
          all.filter((_, i) => existing.has(i)),
          32,
          (p) => io.write(p, 'x'),
        );
        const keep = joinPath(d, 'keep.bin');
        await io.write(keep, 'keep');
        let pulled = 0;
        async function* stream() {
          for (const p of all) {
            pulled++;
            yield p;
          }
        }
        expect(await io.deleteMany(stream())).toBe(6200);
        expect(pulled).toBe(6200);
        expect(sortedPaths(await collect(io.list(d)))).toEqual([keep]);

        // A failing input stream fails the call with its own error (after the requests it started end).
        const boom = new Error('listing failed');
        async function* failing() {
          for (let i = 0; i < 2500; i++) yield joinPath(d, `gone/${i}.bin`);
          throw boom;
        }
        await expect(io.deleteMany(failing())).rejects.toBe(boom);
        expect(await io.exists(keep)).toBe(true);
      },
    );

    it('delete removes one object and leaves its siblings', async () => {
      const d = dir('delete');
      await io.write(joinPath(d, 'a'), 'a');
      await io.write(joinPath(d, 'b'), 'b');
      await io.delete(joinPath(d, 'a'));
      expect(await io.exists(joinPath(d, 'a'))).toBe(false);
      expect(text(await io.read(joinPath(d, 'b')))).toBe('b');
    });

    it('createIfAbsent creates once and never overwrites', async () => {
      const p = joinPath(dir('cas'), 'snapshot-1');
      expect(await io.createIfAbsent(p, 'first')).toBe('created');
      expect(await io.createIfAbsent(p, 'second')).toBe('already-exists');
      expect(text(await io.read(p))).toBe('first');
      // After a plain write, the object still counts as existing.
      const q = joinPath(dir('cas'), 'snapshot-2');
      await io.write(q, 'plain');
      expect(await io.createIfAbsent(q, 'cas')).toBe('already-exists');
      expect(text(await io.read(q))).toBe('plain');
    });

    it('16 concurrent createIfAbsent calls on one key: exactly one wins, 50 rounds', { timeout: 300_000 }, async () => {
      const d = dir('race');
      for (let round = 0; round < 50; round++) {
        const p = joinPath(d, `snapshot-${round}`);
        const payloads = Array.from({ length: 16 }, (_, w) => `round ${round} writer ${w} ${randomUUID()}`);
        const results = await Promise.all(payloads.map((data) => io.createIfAbsent(p, data)));
        const winners = results.flatMap((r, w) => (r === 'created' ? [w] : []));
        expect(winners, `round ${round}: ${results.join(',')}`).toHaveLength(1);
        expect(results.filter((r) => r === 'already-exists')).toHaveLength(15);
        expect(text(await io.read(p))).toBe(payloads[winners[0]!]);
      }
    });

    it('writes a >16 MiB object (multipart on S3) and reads it back by range', { timeout: 180_000 }, async () => {
      const p = joinPath(dir('large'), 'big.bin');
      const size = 17 * 1024 * 1024 + 12345;
      const bytes = randomBytes(size);
      await io.write(p, bytes);
      expect((await io.stat(p)).size).toBe(size);
      const MiB = 1024 * 1024;
      // Ranges inside the first part, across the 8 MiB and 16 MiB part boundaries, and the tail.
      for (const [offset, length] of [
        [0, 1000],
        [8 * MiB - 500, 1000],
        [16 * MiB - 10, 2 * MiB],
        [size - 100, 1000],
      ] as const) {
        const got = await io.readRange(p, offset, length);
        const end = Math.min(size, offset + length);
        expect(got.length).toBe(end - offset);
        expect(Buffer.from(got).equals(bytes.subarray(offset, end)), `range ${offset}+${length}`).toBe(true);
      }
      expect(Buffer.from(await io.read(p)).equals(bytes)).toBe(true);
      if (backend.kind === 's3') {
        // An ETag of the form "<md5>-<parts>" proves the object really went up as a multipart upload.
        const env = s3TestEnv()!;
        const client = sdkClient();
        try {
          const key = p.slice(`s3://${env.bucket}/`.length);
          const head = await client.send(new HeadObjectCommand({ Bucket: env.bucket, Key: key }));
          expect(head.ETag).toMatch(/-\d+"?$/);
        } finally {
          client.destroy();
        }
      }
    });
  });
}

// ------------------------------------------------------------------------------------------------
// S3 only: a conditional PUT whose reply never arrives ("outcome unknown").

type DropMode = 'after-forward' | 'before-forward';

/**
 * An HTTP proxy in front of RGW that, when armed, takes the next conditional PUT (If-None-Match) and
 * either forwards it and then kills the client connection instead of relaying the answer
 * ('after-forward': the write happened or was refused, but the client cannot know), or kills the
 * connection without forwarding ('before-forward': nothing happened).
 */
class LossyProxy extends ForwardingProxy {
  private armed: DropMode | undefined;
  /** What happened to each dropped request: the upstream status, or 'not-forwarded'. */
  readonly dropped: Array<number | 'not-forwarded'> = [];
  conditionalPuts = 0;

  arm(mode: DropMode): void {
    this.armed = mode;
  }

  protected override intercept(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): void {
    const conditionalPut = req.method === 'PUT' && req.headers['if-none-match'] !== undefined;
    if (conditionalPut) this.conditionalPuts++;
    const mode = conditionalPut ? this.armed : undefined;
    if (mode !== undefined) this.armed = undefined;
    if (mode === 'before-forward') {
      this.dropped.push('not-forwarded');
      req.socket.destroy();
      return;
    }
    if (mode !== 'after-forward') return super.intercept(req, res, body);
    this.forward(req, body, (upRes) => {
      upRes.resume();
      upRes.on('end', () => {
        this.dropped.push(upRes.statusCode ?? 0);
        req.socket.destroy();
      });
    });
  }
}

describe.skipIf(!s3Available('S3 createIfAbsent outcome-unknown tests'))(
  'S3FileIO createIfAbsent when the reply to the conditional PUT is lost',
  () => {
    let proxy: LossyProxy;
    let viaProxy: S3FileIO;
    let direct: S3FileIO;
    let root: string;

    beforeAll(async () => {
      proxy = new LossyProxy(s3TestEnv()!.endpoint);
      const endpoint = await proxy.listen();
      viaProxy = new S3FileIO(s3TestOptions({ endpoint, retryBaseDelayMs: 10, maxAttempts: 5 }));
      direct = new S3FileIO(s3TestOptions());
      root = `s3://${s3TestBucket()}/${uniquePrefix('outcome-unknown')}`;
    });
    afterAll(async () => {
      if (direct) {
        await direct.deleteMany(paths(direct.list(root)));
        await direct.close();
      }
      await viaProxy?.close();
      await proxy?.close();
    });

    it('the PUT was applied but the reply lost: resolves to created', async () => {
      const p = joinPath(root, 'applied/snapshot-1');
      proxy.arm('after-forward');
      const before = proxy.dropped.length;
      expect(await viaProxy.createIfAbsent(p, 'mine')).toBe('created');
      // The proxy really forwarded the PUT (RGW answered 200) and dropped the reply.
      expect(proxy.dropped.slice(before)).toEqual([200]);
      expect(text(await direct.read(p))).toBe('mine');
    });

    it('another writer created the key first and the 412 was lost: resolves to already-exists', async () => {
      const p = joinPath(root, 'refused/snapshot-1');
      expect(await direct.createIfAbsent(p, 'theirs')).toBe('created');
      proxy.arm('after-forward');
      const before = proxy.dropped.length;
      expect(await viaProxy.createIfAbsent(p, 'mine')).toBe('already-exists');
      expect(proxy.dropped.slice(before)).toEqual([412]);
      expect(text(await direct.read(p))).toBe('theirs');
    });

    it('the PUT never reached the server: retried and created', async () => {
      const p = joinPath(root, 'not-sent/snapshot-1');
      proxy.arm('before-forward');
      const before = proxy.dropped.length;
      const putsBefore = proxy.conditionalPuts;
      expect(await viaProxy.createIfAbsent(p, 'mine')).toBe('created');
      expect(proxy.dropped.slice(before)).toEqual(['not-forwarded']);
      expect(proxy.conditionalPuts - putsBefore).toBeGreaterThanOrEqual(2); // it had to try again
      expect(text(await direct.read(p))).toBe('mine');
    });

    it('normal conditional PUTs pass through the proxy unchanged', async () => {
      const p = joinPath(root, 'plain/snapshot-1');
      expect(await viaProxy.createIfAbsent(p, 'a')).toBe('created');
      expect(await viaProxy.createIfAbsent(p, 'b')).toBe('already-exists');
      expect(text(await viaProxy.read(p))).toBe('a');
    });
  },
);

describe.skipIf(!s3Available('S3 conditional-write probe test'))('S3FileIO.verifyConditionalWrites on RGW', () => {
  it('accepts RGW (which refuses a second If-None-Match: * PUT) and leaves no probe objects', async () => {
    const io = new S3FileIO(s3TestOptions());
    const root = `s3://${s3TestBucket()}/${uniquePrefix('probe')}`;
    try {
      await expect(io.verifyConditionalWrites(root)).resolves.toBeUndefined();
      expect(await collect(io.list(root))).toEqual([]);
    } finally {
      await io.close();
    }
  });
});
