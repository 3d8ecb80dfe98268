import { describe, expect, it } from 'vitest';
import { TableWrite } from '@tidemark/core';
import { decodeSinkJson, deserializeCommittables, encodeSinkJson, serializeCommittables, CorruptStateError } from '../src/index.js';
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

  it('rejects text that is not JSON or not committables', () => {
    expect(() => decodeSinkJson('{', 'chk-1.json')).toThrow(CorruptStateError);
    expect(() => deserializeCommittables('[{"writerId":0}]')).toThrow(/checkpointId/);
  });
});
