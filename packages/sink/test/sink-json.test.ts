import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TableWrite, buildInitialSchema, openTable } from '@tidemark/core';
import { serializeSchema } from '@tidemark/format';
import { MemoryFileIO } from '@tidemark/storage';
import {
  decodeSinkJson,
  deserializeCheckpointState,
  deserializeCommittables,
  encodeSinkJson,
  serializeCheckpointState,
  serializeCommittables,
  CorruptStateError,
  SinkWriter,
} from '../src/index.js';
import { memoryTable, rows } from './helpers.js';

describe('sink JSON codec', () => {
  it('keeps bigints beyond 2^53 and byte arrays exact', () => {
    const value = {
      a: 9223372036854775807n,
      b: -9223372036854775808n,
      bytes: new Uint8Array([0, 1, 255, 128]),
      nested: [{ x: 1n }],
      s: 'x',
    };
    const back = decodeSinkJson(encodeSinkJson(value)) as typeof value;
    expect(back.a).toBe(9223372036854775807n);
    expect(back.b).toBe(-9223372036854775808n);
    expect(back.bytes).toBeInstanceOf(Uint8Array);
    expect([...back.bytes]).toEqual([0, 1, 255, 128]);
    expect(back.nested[0]!.x).toBe(1n);
    expect(back.s).toBe('x');
  });

  it('round-trips real commit messages with DataFileMeta', async () => {
    const { io, location, schema } = await memoryTable();
    const w = new TableWrite(io, location, schema);
    await w.write(rows(0, 10));
    const messages = await w.prepareCommit();
    const committables = [{ checkpointId: 3n, writerId: 1, messages }];
    const back = deserializeCommittables(serializeCommittables(committables));
    expect(back).toEqual(committables);
    expect(back[0]!.messages[0]!.newFiles[0]!.minSequenceNumber).toBeTypeOf('bigint');
    expect(back[0]!.messages[0]!.partition).toBeInstanceOf(Uint8Array);
  });

  it("round-trips a compacting writer's committable: compaction inputs and outputs, deletion-vector index files", async () => {
    const io = new MemoryFileIO();
    const location = `memory://sink-json-${randomBytes(6).toString('hex')}/db.db/t`;
    const schema = buildInitialSchema(
      {
        fields: [
          { name: 'k', type: 'INT NOT NULL' },
          { name: 'v', type: 'STRING' },
        ],
        primaryKeys: ['k'],
        options: { bucket: '1', 'deletion-vectors.enabled': 'true' },
      },
      1,
    );
    await io.write(`${location}/schema/schema-0`, serializeSchema(schema));
    const table = await openTable(location, { fileIO: io });
    const w = new SinkWriter(table, 0);
    await w.write(Array.from({ length: 20 }, (_, k) => ({ k, v: `a${k}` })));
    const first = await w.prepareCommit(1n);
    await table.newCommit({ commitUser: 'u' }).commit({ identifier: 1n, messages: first.messages });
    await w.close();
    // A fresh writer (as after a restart) takes its levels from the manifests.
    const w2 = new SinkWriter(table, 0);
    await w2.write(Array.from({ length: 10 }, (_, k) => ({ k, v: `b${k}` })));
    const second = await w2.prepareCommit(2n);
    await w2.close();
    const m = second.messages[0]!;
    // Read from a manifest on disk (LocalFileIO, S3) byte fields are Buffers, whose toJSON would
    // turn them into { type: 'Buffer', data } objects: they must come back as bytes.
    const fromDisk = { ...m.compactBefore![0]!, minKey: Buffer.from(m.compactBefore![0]!.minKey) };
    const [decoded] = deserializeCommittables(serializeCommittables([{ ...second, messages: [{ ...m, compactBefore: [fromDisk] }] }]));
    expect(decoded!.messages[0]!.compactBefore![0]!.minKey).toBeInstanceOf(Uint8Array);
    expect([...decoded!.messages[0]!.compactBefore![0]!.minKey]).toEqual([...fromDisk.minKey]);
    expect(m.compactBefore?.length).toBeGreaterThan(0);
    expect(m.compactAfter?.length).toBeGreaterThan(0);
    expect(m.compactNewIndexFiles?.length).toBe(1);
    expect(m.compactNewIndexFiles![0]!.dvRanges?.length).toBeGreaterThan(0);
    const back = deserializeCommittables(serializeCommittables([first, second]));
    expect(back).toEqual([first, second]);
  });

  it('loads a checkpoint state written before writers compacted (no compaction fields)', async () => {
    const path = new URL('./fixtures/chk-3-before-writer-compaction.json', import.meta.url);
    const text = await readFile(path, 'utf8');
    const state = deserializeCheckpointState(text, 'chk-3.json');
    expect(state).toMatchObject({ checkpointId: 3n, commitUser: 'pipe-old', source: { offset: 120, done: false } });
    const m = state.pending[0]!.messages[0]!;
    expect(m.newFiles.map((f) => f.rowCount)).toEqual([2]);
    expect(m.newFiles[0]!.maxSequenceNumber).toBe(1n);
    expect(m.compactBefore).toBeUndefined();
    expect(m.compactNewIndexFiles).toBeUndefined();
    // Written back by this version, it reads the same.
    expect(deserializeCheckpointState(serializeCheckpointState(state), 'chk-3.json')).toEqual(state);
  });

  it('rejects a committable whose compaction field is not a list, naming it', async () => {
    const { io, location, schema } = await memoryTable();
    const w = new TableWrite(io, location, schema);
    await w.write(rows(0, 3));
    const [m] = await w.prepareCommit();
    const text = serializeCommittables([{ checkpointId: 1n, writerId: 0, messages: [{ ...m!, compactAfter: 5 as never }] }]);
    expect(() => deserializeCommittables(text, 'chk-1.json')).toThrow(CorruptStateError);
    expect(() => deserializeCommittables(text, 'chk-1.json')).toThrow(
      /chk-1\.json: committable 0 message 0 field 'compactAfter' must be a list/,
    );
  });

  it('rejects text that is not JSON or not committables', () => {
    expect(() => decodeSinkJson('{', 'chk-1.json')).toThrow(CorruptStateError);
    expect(() => deserializeCommittables('[{"writerId":0}]')).toThrow(/checkpointId/);
  });
});
