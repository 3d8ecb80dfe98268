import { describe, expect, it } from 'vitest';
import avsc from 'avsc';
import { CorruptFileError, FormatError } from '../src/errors.js';
import { AVRO_CODEC_NAMES, getAvroCodec } from '../src/avro-codecs.js';
import { readAvroHeader, readAvroRecords, writeAvroFile, type AvroRecord } from '../src/avro-container.js';

const SCHEMA = {
  type: 'record',
  name: 'rec',
  namespace: 'test.ns',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'name', type: 'string' },
    { name: 'payload', type: 'bytes' },
    { name: 'ts', type: ['null', { type: 'long', logicalType: 'timestamp-millis' }], default: null },
    { name: 'tags', type: { type: 'array', items: ['null', 'long'] } },
  ],
};

function makeRecords(n: number): AvroRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    id: i * 1_000_003,
    name: `row-${i}-${'x'.repeat(i % 50)}`,
    payload: Buffer.from([i & 0xff, (i >> 8) & 0xff, 7]),
    ts: i % 3 === 0 ? null : 1_700_000_000_000 + i,
    tags: i % 2 === 0 ? [] : [i, null, -i],
  }));
}

async function collect(it: AsyncIterable<AvroRecord>): Promise<AvroRecord[]> {
  const out: AvroRecord[] = [];
  for await (const r of it) out.push(r);
  return out;
}

/** Plain-object view of decoded records (avsc returns record-class instances). */
function plain(records: AvroRecord[]): unknown[] {
  return records.map((r) => ({ ...r, payload: Buffer.from(r.payload as Uint8Array).toString('hex') }));
}

async function* chunked(bytes: Uint8Array, size: number, pulled?: { count: number }): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) {
    if (pulled) pulled.count++;
    yield bytes.subarray(i, i + size);
  }
}

describe('Avro object container', () => {
  it.each(AVRO_CODEC_NAMES)('round-trips records with codec %s (several blocks)', async (codec) => {
    const records = makeRecords(500);
    const bytes = await writeAvroFile(SCHEMA, records, { codec, blockSize: 2048 });
    let header: { codec: string } | undefined;
    const back = await collect(readAvroRecords(bytes, { path: 'mem://t', onHeader: (h) => (header = h) }));
    expect(header?.codec).toBe(codec);
    expect(plain(back)).toEqual(plain(records));
  });

  it('writes a file that avsc itself decodes, with the given schema text and only schema+codec metadata', async () => {
    const records = makeRecords(20);
    const bytes = await writeAvroFile(SCHEMA, records, { codec: 'deflate' });
    const header = await readAvroHeader(bytes, { path: 'x' });
    expect([...header.metadata.keys()].sort()).toEqual(['avro.codec', 'avro.schema']);
    expect(header.schemaText).toBe(JSON.stringify(SCHEMA));
    // logicalType and default survive in the stored schema
    expect(header.schemaText).toContain('"logicalType":"timestamp-millis"');
    expect(header.schemaText).toContain('"default":null');

    // Independent decoder: avsc's own BlockDecoder (built-in deflate).
    const decoded = await new Promise<unknown[]>((resolve, reject) => {
      const out: unknown[] = [];
      const dec = new avsc.streams.BlockDecoder();
      dec.on('data', (r: unknown) => out.push(r));
      dec.on('end', () => resolve(out));
      dec.on('error', reject);
      dec.end(Buffer.from(bytes));
    });
    expect(decoded).toHaveLength(20);
    expect((decoded[5] as AvroRecord).name).toBe(records[5]!.name);
  });

  it('reads files written by avsc BlockEncoder', async () => {
    const records = makeRecords(50);
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      const parts: Buffer[] = [];
      const enc = new avsc.streams.BlockEncoder(SCHEMA as avsc.Schema, { codec: 'deflate', blockSize: 500 });
      enc.on('data', (b: Buffer) => parts.push(b));
      enc.on('end', () => resolve(Buffer.concat(parts)));
      enc.on('error', reject);
      for (const r of records) enc.write(r);
      enc.end();
    });
    const back = await collect(readAvroRecords(bytes, { path: 'x' }));
    expect(plain(back)).toEqual(plain(records));
  });

  it('gives identical results for a chunked async source and for whole bytes', async () => {
    const records = makeRecords(300);
    const bytes = await writeAvroFile(SCHEMA, records, { codec: 'zstandard', blockSize: 1024 });
    for (const size of [1, 7, 100, 4096]) {
      const back = await collect(readAvroRecords(chunked(bytes, size), { path: 'x' }));
      expect(plain(back)).toEqual(plain(records));
    }
  });

  it('streams: stopping after the first record does not pull the remaining chunks', async () => {
    const records = makeRecords(2000);
    const bytes = await writeAvroFile(SCHEMA, records, { codec: 'null', blockSize: 1024 });
    const pulled = { count: 0 };
    const totalChunks = Math.ceil(bytes.length / 256);
    for await (const r of readAvroRecords(chunked(bytes, 256, pulled), { path: 'x' })) {
      expect(r.id).toBe(0);
      break;
    }
    expect(totalChunks).toBeGreaterThan(20);
    expect(pulled.count).toBeLessThan(totalChunks / 4);
  });

  it('writes an empty file (header only) that reads back as zero records', async () => {
    const bytes = await writeAvroFile(SCHEMA, [], { codec: 'zstandard' });
    expect(await collect(readAvroRecords(bytes, { path: 'x' }))).toEqual([]);
  });

  it('round-trips longs beyond 2^53 as bigint and keeps safe longs as numbers', async () => {
    const schema = { type: 'record', name: 'r', fields: [{ name: 'v', type: 'long' }] };
    const values = [0, -1, 2 ** 53 - 1, 2n ** 53n + 1n, -(2n ** 63n), 2n ** 63n - 1n];
    const bytes = await writeAvroFile(
      schema,
      values.map((v) => ({ v })),
      { codec: 'null' },
    );
    const back = (await collect(readAvroRecords(bytes, { path: 'x' }))).map((r) => r.v);
    expect(back).toEqual([0, -1, 2 ** 53 - 1, 2n ** 53n + 1n, -(2n ** 63n), 2n ** 63n - 1n]);
    await expect(writeAvroFile(schema, [{ v: 2 ** 60 }], { codec: 'null' })).rejects.toThrow(FormatError);
  });

  it('rejects a Uint8Array for a bytes field with an error naming the field', async () => {
    const rec = { ...makeRecords(1)[0]!, payload: new Uint8Array([1, 2]) };
    await expect(writeAvroFile(SCHEMA, [rec], { codec: 'null' })).rejects.toThrow(/payload/);
  });

  describe('corrupt input raises CorruptFileError naming the path', () => {
    const path = 'memory://wh/t/manifest/manifest-bad-0';

    async function expectCorrupt(source: Uint8Array | AsyncIterable<Uint8Array>): Promise<CorruptFileError> {
      try {
        await collect(readAvroRecords(source, { path }));
      } catch (err) {
        expect(err).toBeInstanceOf(CorruptFileError);
        expect((err as CorruptFileError).path).toBe(path);
        expect((err as Error).message).toContain(path);
        return err as CorruptFileError;
      }
      throw new Error('expected a CorruptFileError');
    }

    it('garbage and empty input', async () => {
      await expectCorrupt(new Uint8Array(0));
      await expectCorrupt(Buffer.from('this is not an avro file at all, just text'));
      await expectCorrupt(new Uint8Array([0x4f, 0x62, 0x6a, 0x01, 0xff, 0xff, 0xff]));
    });

    it.each(AVRO_CODEC_NAMES)('every truncation of a %s file', async (codec) => {
      const bytes = await writeAvroFile(SCHEMA, makeRecords(40), { codec, blockSize: 512 });
      // Avro has no end marker: a cut right after a sync marker is a valid, shorter file and
      // cannot be detected at this level. Every other cut (header, block, sync marker) must fail.
      const sync = Buffer.from((await readAvroHeader(bytes, { path })).syncMarker);
      const boundaries = new Set<number>();
      for (let i = Buffer.from(bytes).indexOf(sync); i >= 0; i = Buffer.from(bytes).indexOf(sync, i + 1)) {
        boundaries.add(i + 16);
      }
      expect(boundaries.size).toBeGreaterThan(2);
      const cuts = new Set<number>();
      for (let cut = 0; cut < bytes.length; cut += Math.max(1, Math.floor(bytes.length / 150))) cuts.add(cut);
      for (let cut = bytes.length - 20; cut < bytes.length; cut++) cuts.add(cut);
      for (const b of boundaries) for (const d of [-1, 1, 2]) cuts.add(b + d);
      for (const cut of cuts) {
        if (boundaries.has(cut) || cut >= bytes.length) continue;
        await expectCorrupt(bytes.subarray(0, cut));
        await expectCorrupt(chunked(bytes.subarray(0, cut), 13));
      }
    });

    it('flipped bytes inside a compressed block or the sync marker', async () => {
      const bytes = await writeAvroFile(SCHEMA, makeRecords(40), { codec: 'snappy' });
      const header = await readAvroHeader(bytes, { path });
      const headerLen = Buffer.from(bytes).indexOf(Buffer.from(header.syncMarker)) + 16;
      const damagedBlock = new Uint8Array(bytes);
      damagedBlock[headerLen + 10] = damagedBlock[headerLen + 10]! ^ 0xff;
      await expectCorrupt(damagedBlock);
      const damagedSync = new Uint8Array(bytes);
      damagedSync[bytes.length - 1] = damagedSync[bytes.length - 1]! ^ 0xff;
      const err = await expectCorrupt(damagedSync);
      expect(err.message).toMatch(/sync marker/);
    });

    it('garbage appended after the last block', async () => {
      const bytes = await writeAvroFile(SCHEMA, makeRecords(3), { codec: 'null' });
      await expectCorrupt(Buffer.concat([bytes, Buffer.from([0x02, 0x40, 1, 2, 3])]));
    });
  });

  it('rejects unsupported codecs by name', () => {
    expect(() => getAvroCodec('bzip2')).toThrow(/bzip2/);
  });

  it('snappy codec verifies the CRC32 of the uncompressed block', async () => {
    const codec = getAvroCodec('snappy');
    const data = Buffer.from('hello hello hello hello snappy');
    const framed = await codec.compress(data);
    expect(Buffer.from(await codec.decompress(framed)).toString()).toBe(data.toString());
    const bad = new Uint8Array(framed);
    bad[bad.length - 1] = bad[bad.length - 1]! ^ 1;
    await expect(codec.decompress(bad)).rejects.toThrow(/CRC32/);
  });
});
