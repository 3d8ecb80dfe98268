import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CdcJsonLinesSource,
  FileIOCheckpointStore,
  JsonLinesFileSource,
  runIngest,
  type ReplayableSource,
  type SourceOffset,
  type SourceOpenOptions,
  type SourceRecord,
} from '../src/index.js';
import { memoryTable, tableIds, tempFiles } from './helpers.js';

const temp = tempFiles('tidemark-source-');
afterAll(() => temp.cleanup());
const tempFile = (name: string, text: string): Promise<string> => temp.file(name, text);

/**
 * An endless source: `n` records, then it waits for more that never come, until the open signal
 * aborts. Without the signal its iteration would never end.
 */
class EndlessSource implements ReplayableSource<Record<string, unknown>> {
  readonly id = 'endless:test';
  readonly bounded = false;
  constructor(
    readonly n: number,
    private readonly onWaiting: () => void,
  ) {}
  async *open(from: SourceOffset, options: SourceOpenOptions = {}): AsyncIterable<SourceRecord<Record<string, unknown>>> {
    for (let i = from === null ? 0 : (from as number); i < this.n; i++) yield { value: { id: i, v: `v${i}` }, offset: i + 1 };
    const signal = options.signal;
    if (signal === undefined) throw new Error('EndlessSource needs a signal');
    const stopped = new Promise((r) => signal.addEventListener('abort', r, { once: true }));
    this.onWaiting();
    await stopped;
  }
}

describe('ReplayableSource: stop signal and backlog', () => {
  it('a JSON-lines file ends its iteration once the signal aborts', async () => {
    const path = await tempFile('in.jsonl', '{"id":0}\n{"id":1}\n{"id":2}\n{"id":3}');
    const controller = new AbortController();
    const seen: unknown[] = [];
    for await (const r of new JsonLinesFileSource(path).open(null, { signal: controller.signal })) {
      seen.push(r.value);
      if (seen.length === 2) controller.abort();
    }
    expect(seen).toEqual([{ id: 0 }, { id: 1 }]);
  });

  it('a JSON-lines file reports its size against the committed byte offset', async () => {
    const text = '{"id":0}\n{"id":1}\n';
    const path = await tempFile('in.jsonl', text);
    const source = new JsonLinesFileSource(path);
    expect(await source.backlog(null)).toEqual([{ partition: resolve(path), end: text.length, committed: 0 }]);
    expect(await source.backlog(9)).toEqual([{ partition: resolve(path), end: text.length, committed: 9 }]);
    await expect(source.backlog('x')).rejects.toThrow(/not a byte offset/);
  });

  it("a CDC file counts an offset inside an event from the event's line", async () => {
    const update = '{"op":"u","before":{"id":1},"after":{"id":1}}\n';
    const path = await tempFile('cdc.jsonl', update + update);
    const source = new CdcJsonLinesSource(path, 'debezium-json');
    const offsets: SourceOffset[] = [];
    for await (const r of source.open(null)) offsets.push(r.offset);
    expect(offsets).toEqual([{ byte: 0, skip: 1 }, update.length, { byte: update.length, skip: 1 }, 2 * update.length]);
    expect((await source.backlog({ byte: update.length, skip: 1 }))[0]).toMatchObject({ end: 2 * update.length, committed: update.length });
    expect((await source.backlog(2 * update.length))[0]!.committed).toBe(2 * update.length);
  });

  it('runIngest hands its signal to the source: a stop while the source waits for records checkpoints what was read', async () => {
    const { io, location } = await memoryTable();
    const store = new FileIOCheckpointStore(io, `${location}-state`);
    const controller = new AbortController();
    const s = await runIngest({
      table: location,
      fileIO: io,
      source: new EndlessSource(25, () => controller.abort()),
      stateStore: store,
      checkpointEvery: 10,
      signal: controller.signal,
    });
    expect(s).toMatchObject({ status: 'stopped', records: 25, offset: 25 });
    expect(await tableIds(io, location)).toEqual([...Array(25).keys()]);
  });
});
