import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  clearConditionalWriteVerdicts,
  ConditionalWriteNotSupportedError,
  DeleteManyError,
  InvalidRangeError,
  NotFoundError,
  S3FileIO,
  s3ClientPoolSize,
  type FileStatus,
  type S3Options,
} from '../src/index.js';
import { FakeS3Server, type RecordedRequest } from './fake-s3-server.js';

// Unit tests of S3FileIO's request logic against an in-process fake that injects failures.
// Conformance against a real S3 server lives in /work/main/test/.
const server = new FakeS3Server();
const ios: S3FileIO[] = [];
beforeAll(() => server.start());
afterAll(async () => {
  for (const io of ios) await io.close();
  await server.stop();
});
afterEach(() => {
  server.objects.clear();
  server.requests.length = 0;
  server.faults.length = 0;
  server.honourIfNoneMatch = true;
  server.pageSize = 1000;
  server.undeletable.clear();
  server.replyDelay = null;
  server.onReply = null;
  clearConditionalWriteVerdicts();
});

function makeIO(extra: S3Options = {}): S3FileIO {
  const io = new S3FileIO({
    endpoint: server.endpoint,
    region: 'us-east-1',
    accessKeyId: 'test',
    secretAccessKey: 'test-secret',
    retryBaseDelayMs: 1,
    ...extra,
  });
  ios.push(io);
  return io;
}

const isPut = (r: RecordedRequest) => r.method === 'PUT';
const puts = () => server.requests.filter(isPut);
const gets = () => server.requests.filter((r) => r.method === 'GET');
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('S3FileIO basics (fake server)', () => {
  it('writes, reads, stats and maps missing keys to NotFoundError', async () => {
    const io = makeIO();
    await io.write('s3://bkt/a/b.txt', 'hello');
    expect(server.get('bkt', 'a/b.txt')).toBe('hello');
    expect(text(await io.read('s3://bkt/a/b.txt'))).toBe('hello');
    const st = await io.stat('s3://bkt/a/b.txt');
    expect(st).toMatchObject({ path: 's3://bkt/a/b.txt', size: 5 });
    expect(await io.exists('s3://bkt/a/b.txt')).toBe(true);
    expect(await io.exists('s3://bkt/nope')).toBe(false);
    await expect(io.read('s3://bkt/nope')).rejects.toBeInstanceOf(NotFoundError);
    await expect(io.stat('s3://bkt/nope')).rejects.toBeInstanceOf(NotFoundError);
    expect(server.requests[0]!.headers['x-amz-checksum-crc32']).toBeUndefined(); // WHEN_REQUIRED
  });

  it('reads ranges with a Range header and maps 416 to InvalidRangeError', async () => {
    const io = makeIO();
    server.put('bkt', 'r', Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
    expect([...(await io.readRange('s3://bkt/r', 2, 3))]).toEqual([2, 3, 4]);
    expect(gets().at(-1)!.headers.range).toBe('bytes=2-4');
    expect([...(await io.readRange('s3://bkt/r', 8, 10))]).toEqual([8, 9]);
    await expect(io.readRange('s3://bkt/r', 10, 1)).rejects.toBeInstanceOf(InvalidRangeError);
    await expect(io.readRange('s3://bkt/missing', 0, 1)).rejects.toBeInstanceOf(NotFoundError);
    expect((await io.readRange('s3://bkt/r', 4, 0)).length).toBe(0);
  });

  it('retries idempotent requests on 503 SlowDown and dropped connections', async () => {
    const io = makeIO();
    server.put('bkt', 'k', 'v');
    server.faults.push({ match: (r) => r.method === 'GET', kind: 'status', status: 503, code: 'SlowDown' });
    server.faults.push({ match: (r) => r.method === 'GET', kind: 'reset' });
    expect(text(await io.read('s3://bkt/k'))).toBe('v');
    expect(gets()).toHaveLength(3);
  });

  it('gives up after maxAttempts and does not retry client errors', async () => {
    const io = makeIO({ maxAttempts: 2 });
    server.put('bkt', 'k', 'v');
    for (let i = 0; i < 3; i++) server.faults.push({ match: (r) => r.method === 'GET', kind: 'status', status: 500 });
    await expect(io.read('s3://bkt/k')).rejects.toThrow(/s3:\/\/bkt\/k/);
    expect(gets()).toHaveLength(2);
    server.faults.length = 0;
    server.requests.length = 0;
    server.faults.push({ match: (r) => r.method === 'GET', kind: 'status', status: 403, code: 'AccessDenied' });
    await expect(io.read('s3://bkt/k')).rejects.toThrow(/AccessDenied/);
    expect(gets()).toHaveLength(1);
  });

  it('lists with pagination, recursively or with a delimiter, skipping directory markers', async () => {
    const io = makeIO();
    server.pageSize = 7;
    for (let i = 0; i < 20; i++) server.put('bkt', `t/data/f-${String(i).padStart(2, '0')}`, 'x'.repeat(i));
    server.put('bkt', 't/schema-0', 's');
    server.put('bkt', 't/marker/', '');
    server.put('bkt', 'tother/x', 'no');
    const all: FileStatus[] = [];
    for await (const s of io.list('s3://bkt/t')) all.push(s);
    expect(all.map((s) => s.path)).toEqual([
      ...Array.from({ length: 20 }, (_, i) => `s3://bkt/t/data/f-${String(i).padStart(2, '0')}`),
      's3://bkt/t/schema-0',
    ]);
    expect(all[5]!.size).toBe(5);
    expect(server.requests.filter((r) => r.query.get('list-type') === '2').length).toBeGreaterThan(2);
    const top: string[] = [];
    for await (const s of io.list('s3://bkt/t/', { recursive: false })) top.push(s.path);
    expect(top).toEqual(['s3://bkt/t/schema-0']);
    expect(server.requests.at(-1)!.query.get('delimiter')).toBe('/');
  });

  it('deleteMany sends batches of at most 1,000 keys, consumes the stream lazily, and reports per-key errors', async () => {
    const io = makeIO();
    for (let i = 0; i < 2500; i++) server.put('bkt', `d/${i}`, 'x');
    let produced = 0;
    const producedAtRequest: number[] = [];
    const origPush = server.requests.push.bind(server.requests);
    server.requests.push = (...items: RecordedRequest[]) => {
      for (const r of items) if (r.query.has('delete')) producedAtRequest.push(produced);
      return origPush(...items);
    };
    async function* paths() {
      for (let i = 0; i < 2500; i++) {
        produced++;
        yield `s3://bkt/d/${i}`;
      }
    }
    expect(await io.deleteMany(paths())).toBe(2500);
    // Each request carries the next 1,000 keys; the stream is read batch by batch.
    expect(producedAtRequest).toHaveLength(3);
    expect(producedAtRequest.every((n, i) => n >= Math.min(1000 * (i + 1), 2500))).toBe(true);
    expect(server.objects.size).toBe(0);

    server.put('bkt', 'keep', 'x');
    server.put('bkt', 'go', 'x');
    server.undeletable.add('keep');
    const err = await io.deleteMany(['s3://bkt/keep', 's3://bkt/go']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeleteManyError);
    expect((err as DeleteManyError).failures).toEqual([{ path: 's3://bkt/keep', code: 'AccessDenied', message: 'Access Denied' }]);
    expect(server.get('bkt', 'go')).toBeUndefined();
  });

  it('deleteMany keeps 4 DeleteObjects requests in flight and reads the stream only as far as a free slot allows', async () => {
    const io = makeIO();
    const n = 10_500;
    for (let i = 0; i < n; i++) server.put('bkt', `m/${i}`, 'x');
    let produced = 0;
    let replied = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    let maxAhead = 0;
    const isDelete = (r: RecordedRequest): boolean => r.method === 'POST' && r.query.has('delete');
    const origPush = server.requests.push.bind(server.requests);
    server.requests.push = (...items: RecordedRequest[]) => {
      for (const r of items) if (isDelete(r)) maxInFlight = Math.max(maxInFlight, ++inFlight);
      return origPush(...items);
    };
    server.replyDelay = (r) => (isDelete(r) ? 150 : 0);
    server.onReply = (r) => {
      if (!isDelete(r)) return;
      inFlight--;
      replied++;
    };
    async function* paths() {
      for (let i = 0; i < n; i++) {
        produced++;
        maxAhead = Math.max(maxAhead, produced - 1000 * replied);
        yield `s3://bkt/m/${i}`;
      }
    }
    expect(await io.deleteMany(paths())).toBe(n);
    expect(server.requests.filter(isDelete)).toHaveLength(11);
    expect(maxInFlight).toBe(4);
    // 4 requests in flight plus the batch being filled, never the whole input.
    expect(maxAhead).toBeLessThanOrEqual(5000);
    expect(server.objects.size).toBe(0);
  });

  it('writes large objects with a multipart upload and aborts it on failure', async () => {
    const MiB = 1024 * 1024;
    const io = makeIO({ multipartThreshold: 6 * MiB, partSize: 5 * MiB });
    const data = new Uint8Array(12 * MiB).map((_, i) => i % 251);
    await io.write('s3://bkt/big', data);
    const parts = server.requests.filter((r) => r.query.has('partNumber'));
    parts.sort((x, y) => Number(x.query.get('partNumber')) - Number(y.query.get('partNumber')));
    expect(parts.map((r) => r.bodyLength)).toEqual([5 * MiB, 5 * MiB, 2 * MiB]);
    expect(Buffer.compare(server.objects.get('bkt/big')!.data, Buffer.from(data))).toBe(0);

    server.requests.length = 0;
    server.faults.push({ match: (r) => r.query.get('partNumber') === '2', kind: 'status', status: 400, code: 'InvalidPart' });
    await expect(io.write('s3://bkt/big2', data)).rejects.toThrow(/InvalidPart/);
    expect(server.requests.some((r) => r.method === 'DELETE' && r.query.has('uploadId'))).toBe(true);
    expect(server.objects.has('bkt/big2')).toBe(false);
  });

  it('shares one client per configuration and releases it on close', async () => {
    const before = s3ClientPoolSize();
    const a = new S3FileIO({ endpoint: server.endpoint, accessKeyId: 'p', secretAccessKey: 'pool-secret' });
    const b = new S3FileIO({ endpoint: server.endpoint, accessKeyId: 'p', secretAccessKey: 'pool-secret' });
    expect(s3ClientPoolSize()).toBe(before + 1);
    await a.close();
    expect(s3ClientPoolSize()).toBe(before + 1);
    await b.write('s3://bkt/still-open', 'ok');
    await b.close();
    expect(s3ClientPoolSize()).toBe(before);
  });
});

describe('S3FileIO.createIfAbsent (fake server)', () => {
  it('sends If-None-Match: * and maps 412 to already-exists without a read-back', async () => {
    const io = makeIO();
    expect(await io.createIfAbsent('s3://bkt/snap-1', 'first')).toBe('created');
    expect(puts()[0]!.headers['if-none-match']).toBe('*');
    expect(await io.createIfAbsent('s3://bkt/snap-1', 'second')).toBe('already-exists');
    expect(server.get('bkt', 'snap-1')).toBe('first');
    expect(gets()).toHaveLength(0);
  });

  it('resolves a 500 after the PUT was applied by reading back: created', async () => {
    const io = makeIO();
    server.faults.push({ match: isPut, kind: 'apply-then-status', status: 500 });
    expect(await io.createIfAbsent('s3://bkt/k', 'mine')).toBe('created');
    expect(puts()).toHaveLength(1); // never blindly re-PUT
    expect(gets()).toHaveLength(1);
  });

  it('resolves a connection reset after the PUT was applied: created', async () => {
    const io = makeIO();
    server.faults.push({ match: isPut, kind: 'apply-then-reset' });
    expect(await io.createIfAbsent('s3://bkt/k', 'mine')).toBe('created');
    expect(server.get('bkt', 'k')).toBe('mine');
  });

  it('resolves a 503 when another writer owns the key: already-exists', async () => {
    const io = makeIO();
    server.put('bkt', 'k', 'theirs');
    server.faults.push({ match: isPut, kind: 'status', status: 503, code: 'SlowDown' });
    expect(await io.createIfAbsent('s3://bkt/k', 'mine')).toBe('already-exists');
    expect(server.get('bkt', 'k')).toBe('theirs');
  });

  it('retries the PUT when the read-back finds nothing', async () => {
    const io = makeIO();
    server.faults.push({ match: isPut, kind: 'reset' });
    expect(await io.createIfAbsent('s3://bkt/k', 'mine')).toBe('created');
    expect(puts()).toHaveLength(2);
    expect(server.get('bkt', 'k')).toBe('mine');
  });

  it('treats a 412 after an unacknowledged earlier PUT of ours as created', async () => {
    const io = makeIO();
    // Our first PUT lands but its reply is lost, and the read-back does not see it yet (as if the
    // PUT were still in flight); the retried PUT then gets 412 against our own bytes.
    server.faults.push({ match: isPut, kind: 'apply-then-reset' });
    server.faults.push({ match: (r) => r.method === 'GET', kind: 'status', status: 404, code: 'NoSuchKey' });
    expect(await io.createIfAbsent('s3://bkt/k', 'mine')).toBe('created');
    expect(puts()).toHaveLength(2);
  });

  it('409 ConditionalRequestConflict: already-exists when the other write landed, retry when it did not', async () => {
    const io = makeIO();
    server.put('bkt', 'k', 'theirs');
    server.faults.push({ match: isPut, kind: 'status', status: 409, code: 'ConditionalRequestConflict' });
    expect(await io.createIfAbsent('s3://bkt/k', 'mine')).toBe('already-exists');
    server.faults.push({ match: isPut, kind: 'status', status: 409, code: 'ConditionalRequestConflict' });
    expect(await io.createIfAbsent('s3://bkt/k2', 'mine')).toBe('created');
    expect(server.get('bkt', 'k2')).toBe('mine');
  });

  it('501 NotImplemented raises ConditionalWriteNotSupportedError', async () => {
    const io = makeIO();
    server.faults.push({ match: isPut, kind: 'status', status: 501, code: 'NotImplemented' });
    await expect(io.createIfAbsent('s3://bkt/k', 'x')).rejects.toBeInstanceOf(ConditionalWriteNotSupportedError);
  });

  it('gives up with an error (not a guess) when every attempt is ambiguous and nothing is stored', async () => {
    const io = makeIO({ maxAttempts: 3 });
    for (let i = 0; i < 3; i++) server.faults.push({ match: isPut, kind: 'status', status: 500 });
    await expect(io.createIfAbsent('s3://bkt/k', 'x')).rejects.toThrow(/did not complete after 3 attempts/);
  });
});

describe('S3FileIO.verifyConditionalWrites (fake server)', () => {
  it('passes when the store honours If-None-Match and removes the probe key', async () => {
    const io = makeIO();
    await io.verifyConditionalWrites('s3://bkt/wh');
    expect(puts().map((r) => r.key)).toHaveLength(2);
    expect(puts()[0]!.key).toMatch(/^wh\/\.tidemark-probe\//);
    expect(server.objects.size).toBe(0);
  });

  it('fails when the store ignores If-None-Match', async () => {
    const io = makeIO();
    server.honourIfNoneMatch = false;
    await expect(io.verifyConditionalWrites('s3://bkt/wh2')).rejects.toBeInstanceOf(ConditionalWriteNotSupportedError);
    expect(server.objects.size).toBe(0);
  });

  it("is skipped with conditionalWriteCheck: 'skip'", async () => {
    const io = makeIO({ conditionalWriteCheck: 'skip' });
    server.honourIfNoneMatch = false;
    await io.verifyConditionalWrites('s3://bkt/wh3');
    expect(server.requests).toHaveLength(0);
  });

  it('is skipped with TIDEMARK_S3_SKIP_CONDITIONAL_CHECK=1 unless the option asks to probe', async () => {
    server.honourIfNoneMatch = false;
    process.env.TIDEMARK_S3_SKIP_CONDITIONAL_CHECK = '1';
    try {
      const skipping = makeIO();
      const probing = makeIO({ conditionalWriteCheck: 'probe' });
      await skipping.verifyConditionalWrites('s3://bkt/wh4');
      expect(server.requests).toHaveLength(0);
      await expect(probing.verifyConditionalWrites('s3://bkt/wh4')).rejects.toBeInstanceOf(ConditionalWriteNotSupportedError);
      expect(puts()).toHaveLength(2);
    } finally {
      delete process.env.TIDEMARK_S3_SKIP_CONDITIONAL_CHECK;
    }
  });
});
