import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { csvCell, csvField, writeRecordBatches } from '../src/output/writers.js';
import { idNameBatch, intBatch, MemoryStream } from './helpers.js';

describe('csv', () => {
  it('quotes per RFC 4180 only where needed', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
    expect(csvField('')).toBe('""');
  });
  it('null is an empty field, nested values are JSON text', () => {
    expect(csvCell(null)).toBe('');
    expect(csvCell(12)).toBe('12');
    expect(csvCell(true)).toBe('true');
    expect(csvCell([1, 'x'])).toBe('"[1,""x""]"');
    expect(csvCell(new Map([['k', 1]]))).toBe('"{""k"":1}"');
  });
  it('writes a header row and CRLF records', async () => {
    const out = new MemoryStream();
    const result = await writeRecordBatches([idNameBatch([1n, 2n, 3n], ['a,b', null, ''])], out, { format: 'csv' });
    expect(result.rows).toBe(3);
    expect(out.text).toBe('id,name\r\n1,"a,b"\r\n2,\r\n3,""\r\n');
  });
  it('prints the header from the schema when there are no rows', async () => {
    const out = new MemoryStream();
    await writeRecordBatches([], out, { format: 'csv', schema: idNameBatch([], []).schema });
    expect(out.text).toBe('id,name\r\n');
  });
});

describe('jsonl', () => {
  it('writes one object per row across batches', async () => {
    const out = new MemoryStream();
    await writeRecordBatches([idNameBatch([1n], ['x']), idNameBatch([2n ** 62n], [null])], out, { format: 'jsonl' });
    expect(out.text).toBe('{"id":1,"name":"x"}\n{"id":"4611686018427387904","name":null}\n');
  });
  it('honours --limit and stops pulling batches', async () => {
    let pulled = 0;
    let closed = false;
    async function* source() {
      try {
        for (let i = 0; i < 100; i++) {
          pulled++;
          yield intBatch([i * 3, i * 3 + 1, i * 3 + 2]);
        }
      } finally {
        closed = true;
      }
    }
    const out = new MemoryStream();
    const result = await writeRecordBatches(source(), out, { format: 'jsonl', limit: 4 });
    expect(result.rows).toBe(4);
    expect(out.text).toBe('{"n":0}\n{"n":1}\n{"n":2}\n{"n":3}\n');
    expect(pulled).toBe(2);
    expect(closed).toBe(true);
  });
  it('limit 0 writes nothing', async () => {
    const out = new MemoryStream();
    expect((await writeRecordBatches([intBatch([1])], out, { format: 'jsonl', limit: 0 })).rows).toBe(0);
    expect(out.text).toBe('');
  });
});

describe('table', () => {
  it('aligns columns, right-aligns numbers and cuts wide cells', async () => {
    const out = new MemoryStream();
    await writeRecordBatches([idNameBatch([1n, 1234n], ['short', 'a very long name indeed'])], out, { format: 'table', maxCellWidth: 10 });
    expect(out.text.split('\n')).toEqual(['id   | name', '-----+-----------', '   1 | short', '1234 | a very lo…', '']);
  });
  it('sizes columns from the first rows and keeps those widths later', async () => {
    const out = new MemoryStream();
    await writeRecordBatches([idNameBatch([1n], ['ab']), idNameBatch([2n], ['abcdef\nx'])], out, { format: 'table', tableSampleRows: 1 });
    expect(out.text.split('\n')).toEqual(['id | name', '---+-----', ' 1 | ab', ' 2 | abc…', '']);
  });
  it('tells a NULL from the strings "null", "NULL" and the empty string', async () => {
    const out = new MemoryStream();
    await writeRecordBatches([idNameBatch([1n, 2n, 3n, 4n, 5n], [null, 'null', 'NULL', '', 'nullable'])], out, { format: 'table' });
    expect(out.text.split('\n')).toEqual([
      'id | name',
      '---+---------',
      ' 1 | NULL',
      ' 2 | "null"',
      ' 3 | "NULL"',
      ' 4 | ""',
      ' 5 | nullable',
      '',
    ]);
  });
});

describe('backpressure and abort', () => {
  /** A slow sink that records how many writes were queued at once. */
  class SlowStream extends Writable {
    text = '';
    queued = 0;
    maxQueued = 0;
    constructor() {
      super({ highWaterMark: 1024, decodeStrings: false });
    }
    override write(chunk: unknown, ...rest: never[]): boolean {
      this.queued++;
      this.maxQueued = Math.max(this.maxQueued, this.queued);
      return super.write(chunk, ...rest);
    }
    override _write(chunk: string, _enc: BufferEncoding, cb: () => void): void {
      setImmediate(() => {
        this.text += chunk;
        this.queued--;
        cb();
      });
    }
  }

  it('waits for drain instead of queueing every chunk', async () => {
    const out = new SlowStream();
    const name = 'x'.repeat(1000);
    const batches = Array.from({ length: 20 }, (_, b) =>
      idNameBatch(
        Array.from({ length: 100 }, (_, i) => BigInt(b * 100 + i)),
        Array(100).fill(name),
      ),
    );
    const result = await writeRecordBatches(batches, out, { format: 'jsonl' });
    expect(result.rows).toBe(2000);
    const lines = out.text.trimEnd().split('\n');
    expect(lines).toHaveLength(2000);
    expect(JSON.parse(lines[1999]!)).toEqual({ id: 1999, name });
    expect(out.maxQueued).toBe(1);
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    async function* source() {
      yield intBatch([1]);
      controller.abort(new Error('stop'));
      yield intBatch([2]);
    }
    const out = new MemoryStream();
    await expect(writeRecordBatches(source(), out, { format: 'jsonl', signal: controller.signal })).rejects.toThrow('stop');
    expect(out.text).not.toContain('"n":2');
  });
});
