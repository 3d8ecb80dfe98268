/**
 * Decoded row groups passed on as Arrow IPC bytes: `scanIpcStream` finds the layout of the streams
 * parquet-wasm's decode workers emit (and refuses streams that are not plain), `joinIpcStreams`
 * joins them into one stream of the same rows, and `ParquetRowGroupStream.addIpc` writes them
 * (joined on an encode worker) into the file the Arrow path writes: the same rows in the same
 * order, groups cut between streams nearest to `groupRows`, rows added as Arrow in between kept in
 * place.
 */
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';

import {
  encodeParquetIpc,
  ParquetDataFile,
  ParquetEncodeError,
  ParquetRowGroupStream,
  joinIpcStreams,
  readParquetFile,
  readParquetFooter,
  parquetEncodeSettings,
  scanIpcStream,
  writeParquetFile,
  type IpcStreamSegment,
} from '../src/index.js';
import { CountingFileIO } from './helpers/counting-file-io.js';
import { sampleBatches } from './helpers/sample-batches.js';
import { trackedPools } from './helpers/test-pools.js';

const pool = trackedPools();

async function rowsOf(bytes: Uint8Array): Promise<unknown[]> {
  const io = new CountingFileIO().put('f', bytes).asFileIO();
  const out: unknown[] = [];
  for await (const b of readParquetFile(io, 'f', { pool: false })) for (const r of b) out.push(r?.toJSON());
  return out;
}

async function groupsOf(bytes: Uint8Array): Promise<number[]> {
  const io = new CountingFileIO().put('f', bytes).asFileIO();
  return (await readParquetFooter(io, 'f')).rowGroups.map((g) => Number(g.numRows));
}

/** The row groups of a file of `rows` rows in groups of `groupRows`, decoded on a worker as IPC streams. */
async function decodedSegments(rows: number, groupRows: number): Promise<{ segments: IpcStreamSegment[]; input: arrow.RecordBatch[] }> {
  const input = sampleBatches(rows, rows);
  const io = new CountingFileIO().put('in', writeParquetFile(input, { rowGroupSize: groupRows })).asFileIO();
  const file = await ParquetDataFile.open(io, 'in');
  const segments: IpcStreamSegment[] = [];
  for (let g = 0; g < file.rowGroups.length; g++) {
    const decoded = await file.decodeToIpc([g], { pool: pool(2) });
    if (decoded === null || !('segment' in decoded)) throw new Error(`row group ${g} did not decode to a plain IPC stream`);
    segments.push(decoded.segment);
  }
  return { segments, input };
}

describe('scanIpcStream and joinIpcStreams', () => {
  it("finds the schema, the record batches and their rows in a decode worker's stream", async () => {
    const { segments } = await decodedSegments(1_000, 300);
    expect(segments.map((s) => s.rows)).toEqual([300, 300, 300, 100]);
    for (const s of segments) {
      expect(arrow.tableFromIPC(s.bytes).numRows).toBe(s.rows);
      // The end-of-stream marker: continuation, then a zero length.
      expect([...s.bytes.subarray(s.batchesEnd)]).toEqual([255, 255, 255, 255, 0, 0, 0, 0]);
    }
  });

  it('joins streams into one stream of their rows in order', async () => {
    const { segments, input } = await decodedSegments(1_000, 300);
    const joined = arrow.tableFromIPC(joinIpcStreams(segments));
    expect(joined.numRows).toBe(1_000);
    expect(joined.toArray().map((r) => r?.toJSON())).toEqual(new arrow.Table(input).toArray().map((r) => r?.toJSON()));
    expect(scanIpcStream(joinIpcStreams(segments))?.rows).toBe(1_000);
  });

  it('refuses streams that are not plain: dictionary batches, truncated bytes, no schema', () => {
    const dict = new arrow.Table({
      s: arrow.vectorFromArray(['a', 'b', 'a'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())),
    });
    expect(scanIpcStream(arrow.tableToIPC(dict, 'stream'))).toBeNull();
    const plain = arrow.tableToIPC(new arrow.Table(sampleBatches(100, 50)), 'stream');
    expect(scanIpcStream(plain)?.rows).toBe(100);
    expect(scanIpcStream(plain.subarray(0, plain.length - 20))).toBeNull();
    expect(scanIpcStream(new Uint8Array([255, 255, 255, 255, 0, 0, 0, 0]))).toBeNull();
  });
});

describe('ParquetRowGroupStream.addIpc', () => {
  it('writes the rows of decoded streams in order, cutting groups between streams nearest to groupRows', async () => {
    const { segments, input } = await decodedSegments(3_000, 300);
    const stream = new ParquetRowGroupStream({ groupRows: 1_000, pool: pool(2) });
    for (const s of segments) await stream.addIpc(s);
    const bytes = await stream.finish();
    // 900 is 100 short of a group, 1,200 would be 200 over: the group ends before the fourth stream.
    expect(await groupsOf(bytes)).toEqual([900, 900, 900, 300]);
    expect(await rowsOf(bytes)).toEqual(await rowsOf(writeParquetFile(input)));
  });

  it('keeps rows added as Arrow between the streams in place, and writes the same file without workers', async () => {
    const extra = sampleBatches(2_000, 250).slice(6); // rows 1,500..1,999: ids distinct from the streams'
    const write = async (target: ParquetRowGroupStream): Promise<{ bytes: Uint8Array; input: arrow.RecordBatch[] }> => {
      // The streams' buffers go to the encode worker (detached here): each file decodes its own.
      const { segments, input } = await decodedSegments(1_200, 300);
      await target.addIpc(segments[0]!);
      await target.add(extra[0]!);
      await target.addIpc(segments[1]!);
      await target.addIpc(segments[2]!);
      await target.addIpc(segments[3]!);
      await target.add(extra[1]!);
      return { bytes: await target.finish(), input };
    };
    const onWorkers = await write(new ParquetRowGroupStream({ groupRows: 700, pool: pool(2) }));
    const here = await write(new ParquetRowGroupStream({ groupRows: 700, pool: false }));
    const ids = (await rowsOf(onWorkers.bytes)).map((r) => Number((r as { id: bigint }).id));
    const all = new arrow.Table([...onWorkers.input, ...extra]).getChild('id')!.toArray() as BigInt64Array;
    const id = (i: number): number => Number(all[i]);
    const expected = [
      ...Array.from({ length: 300 }, (_, i) => id(i)),
      ...Array.from({ length: 250 }, (_, i) => id(1_200 + i)),
      ...Array.from({ length: 900 }, (_, i) => id(300 + i)),
      ...Array.from({ length: 250 }, (_, i) => id(1_450 + i)),
    ];
    expect(ids).toEqual(expected);
    expect(await rowsOf(here.bytes)).toEqual(await rowsOf(onWorkers.bytes));
    // 300 + 250 + 300 (cut between streams: 850 is as far over 700 as 550 is short), 300 + 300 + 100
    // of the Arrow rows (cut exactly: Arrow rows are sliced), and the last 150.
    expect(await groupsOf(onWorkers.bytes)).toEqual([850, 700, 150]);
    expect(await groupsOf(here.bytes)).toEqual([850, 700, 150]);
  });
});

describe('ParquetWorkerPool.encodeIpcSegments', () => {
  it('encodes the joined streams to the bytes this thread encodes, and fails typed on bytes that are not a stream', async () => {
    const settings = parquetEncodeSettings({ compression: 'zstd', rowGroupSize: 1_000 });
    const here = encodeParquetIpc(joinIpcStreams((await decodedSegments(1_000, 300)).segments), settings);
    const workers = pool(1);
    const { segments } = await decodedSegments(1_000, 300);
    expect(Buffer.compare(await workers.encodeIpcSegments(segments, settings), here)).toBe(0);
    // A record batch message cut short: parquet-wasm refuses the joined stream; the pool goes on.
    const broken = (await decodedSegments(1_000, 300)).segments.map((s) => ({ ...s, batchesEnd: s.batchesEnd - 16 }));
    await expect(workers.encodeIpcSegments(broken, settings)).rejects.toBeInstanceOf(ParquetEncodeError);
    const again = (await decodedSegments(1_000, 300)).segments;
    expect(Buffer.compare(await workers.encodeIpcSegments(again, settings), here)).toBe(0);
  });
});
