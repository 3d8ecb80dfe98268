import { randomBytes } from 'node:crypto';
import { buildInitialSchema, openTable } from '@tidemark/core';
import { serializeSchema, type TableSchema } from '@tidemark/format';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import type { ReplayableSource, SourceOffset, SourceRecord } from '../src/index.js';

export const spec = {
  fields: [
    { name: 'id', type: 'BIGINT NOT NULL' },
    { name: 'v', type: 'STRING' },
  ],
  options: { bucket: '-1', 'file.format': 'parquet' },
};

/** A fresh memory table; returns its FileIO, location and schema. */
export async function memoryTable(name = 't'): Promise<{ io: FileIO; location: string; schema: TableSchema }> {
  const io = new MemoryFileIO();
  const location = `memory://sink-${randomBytes(6).toString('hex')}/db.db/${name}`;
  const schema = buildInitialSchema(spec, 1_000 + Math.floor(Math.random() * 1e9));
  await io.write(`${location}/schema/schema-0`, serializeSchema(schema));
  return { io, location, schema };
}

export function rows(from: number, to: number): Array<{ id: number; v: string }> {
  const out: Array<{ id: number; v: string }> = [];
  for (let i = from; i < to; i++) out.push({ id: i, v: `v${i}` });
  return out;
}

/** The table's ids (sorted) at the latest snapshot. */
export async function tableIds(io: FileIO, location: string): Promise<number[]> {
  const t = await openTable(location, { fileIO: io });
  if ((await t.snapshotManager.latestId()) === null) return [];
  const data = await t.newRead().toArrowTable();
  const ids = data.getChild('id')!;
  const out: number[] = [];
  for (let i = 0; i < data.numRows; i++) out.push(Number(ids.get(i)));
  return out.sort((a, b) => a - b);
}

/** An in-memory replayable source of `n` rows; offset = index of the next record. */
export class ArraySource implements ReplayableSource<Record<string, unknown>> {
  readonly bounded = true;
  opened: SourceOffset[] = [];
  constructor(
    readonly n: number,
    readonly id = 'array:test',
  ) {}
  async *open(from: SourceOffset): AsyncIterable<SourceRecord<Record<string, unknown>>> {
    this.opened.push(from);
    for (let i = from === null ? 0 : (from as number); i < this.n; i++) yield { value: { id: i, v: `v${i}` }, offset: i + 1 };
  }
}

/** Thrown by the test crash hook in place of SIGKILL. */
export class SimulatedCrash extends Error {}
