/**
 * Partition expiration and dropping in the library (in-memory store): Java's partition-time
 * parsing (default format, `partition.timestamp-pattern`, `partition.timestamp-formatter`),
 * `update-time`, unparsable and NULL values skipped with a warning, Paimon's order and
 * `partition.expiration-max-num`, `partition.expiration-batch-size`, the check interval of the
 * commit path, and drop-partition errors. Times are local wall-clock times in June.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import {
  CommitInputError,
  FileSystemCatalog,
  CoreOptions,
  InvalidOptionError,
  MaintenanceArgumentError,
  PartitionNotFoundError,
  type Table,
} from '../src/index.js';
import { compileDatePattern } from '../src/partition/date-pattern.js';

let n = 0;

async function table(
  fields: Array<{ name: string; type: string }>,
  partitionKeys: string[],
  options: Record<string, string> = {},
): Promise<Table> {
  const catalog = new FileSystemCatalog(`memory://partition-expire-${process.pid}-${++n}/wh`, { fileIO: new MemoryFileIO() });
  await catalog.createTable('db.t', { fields, partitionKeys, options });
  return catalog.getTable('db.t');
}

/** A table partitioned by `dt STRING` with one row per given partition value (one commit each). */
async function dailyTable(values: readonly (string | null)[], options: Record<string, string> = {}): Promise<Table> {
  const t = await table(
    [
      { name: 'dt', type: 'STRING' },
      { name: 'v', type: 'INT' },
    ],
    ['dt'],
    options,
  );
  for (const [i, dt] of values.entries()) await t.append([{ dt, v: i }], { expire: false });
  return t;
}

const local = (day: number, hour = 12): number => new Date(2024, 5, day, hour).getTime();

function warnings(): { warn(m: string): void; messages: string[] } {
  const messages: string[] = [];
  return { messages, warn: (m) => messages.push(m) };
}

async function rows(t: Table, snapshotId?: number): Promise<string[]> {
  const out = await t.newRead(snapshotId !== undefined ? { snapshotId } : {}).toArrowTable();
  return out
    .toArray()
    .map((r) => String((r.toJSON() as { dt: string | null }).dt))
    .sort();
}

describe('Java date patterns', () => {
  it('parses what DateTimeFormatter.ofPattern parses, strictly', () => {
    const ms = (p: string, text: string): number | null => compileDatePattern(p).parse(text);
    expect(ms('yyyyMMdd', '20240601')).toBe(Date.UTC(2024, 5, 1));
    expect(ms('yyyyMMdd', '2024061')).toBeNull(); // fixed widths: one digit short
    expect(ms('yyyy-MM-dd HH:mm:ss', '2024-06-01 13:45:10')).toBe(Date.UTC(2024, 5, 1, 13, 45, 10));
    expect(ms("yyyy/MM/dd'T'HH", '2024/06/01T07')).toBe(Date.UTC(2024, 5, 1, 7));
    expect(ms('yyyy-M-d', '2024-6-1')).toBe(Date.UTC(2024, 5, 1));
    expect(ms('yyyy-MM-dd', '2024-13-01')).toBeNull(); // SMART: month out of range
    expect(ms('yyyy-MM-dd', '2023-02-30')).toBe(Date.UTC(2023, 1, 28)); // SMART clamps the day
    expect(ms('yyyy-MM-dd', '2024-06-01x')).toBeNull();
    expect(ms('yyyyMM', '202406')).toBeNull(); // no day: Java cannot make a date of it
    expect(ms('dd MMM yyyy', '01 Jun 2024')).toBe(Date.UTC(2024, 5, 1));
    expect(() => compileDatePattern('yyyy-ww')).toThrow(/pattern letter 'w' is not supported/);
  });

  it('refuses a bad partition.timestamp-formatter with an error naming the option', async () => {
    await expect(dailyTable([], { 'partition.timestamp-formatter': "yyyy-'MM" })).rejects.toThrow(
      /table option 'partition\.timestamp-formatter' = 'yyyy-'MM' is not a usable date pattern: unterminated quote/,
    );
    expect(() => new CoreOptions({ 'partition.timestamp-formatter': 'yyyy-QQ' }, false).partitionTimestampFormatter).toThrow(
      InvalidOptionError,
    );
    await expect(dailyTable([], { 'partition.expiration-strategy': 'custom' })).rejects.toThrow(/needs a Java strategy class/);
  });
});

describe('partition expiration', () => {
  it('values-time with the default format: older partitions go in one OVERWRITE snapshot, older snapshots keep them', async () => {
    const t = await dailyTable(['2024-06-01', '2024-06-20', '2024-06-25 08:00:00', '2024-06-29']);
    const log = warnings();
    const dry = await t.expirePartitions({ expirationTimeMs: 7 * 86_400_000, dryRun: true, now: () => local(30), logger: log });
    expect(dry.partitions.map((p) => p.partition)).toEqual(['dt=2024-06-01', 'dt=2024-06-20']);
    expect(dry.snapshotIds).toEqual([]);
    expect((await t.snapshotManager.latest())!.id).toBe(4);
    const real = await t.expirePartitions({ expirationTimeMs: 7 * 86_400_000, now: () => local(30), logger: log });
    expect(real.partitions.map((p) => p.partition)).toEqual(['dt=2024-06-01', 'dt=2024-06-20']);
    expect(real.snapshotIds).toEqual([5]);
    expect((await t.snapshotManager.snapshot(5)).commitKind).toBe('OVERWRITE');
    expect(await rows(t)).toEqual(['2024-06-25 08:00:00', '2024-06-29']);
    expect(await rows(t, 4)).toEqual(['2024-06-01', '2024-06-20', '2024-06-25 08:00:00', '2024-06-29']);
    expect(log.messages).toEqual([]);
  });

  it('skips an unparsable value and a NULL value with a warning naming them, and drops nothing on a guess', async () => {
    const t = await dailyTable(['2024-06-01', 'not-a-date', null, '2024-06-29']);
    const log = warnings();
    const s = await t.expirePartitions({ expirationTimeMs: 86_400_000, now: () => local(30), logger: log });
    expect(s.partitions.map((p) => p.partition)).toEqual(['dt=2024-06-01', 'dt=2024-06-29']);
    expect(s.skipped.map((k) => k.partition)).toEqual(['dt=__DEFAULT_PARTITION__', 'dt=not-a-date']);
    expect(log.messages).toHaveLength(2);
    expect(log.messages.find((m) => m.includes("'dt=not-a-date'"))).toMatch(/cannot read a time from 'not-a-date'/);
    expect(log.messages.find((m) => m.includes('__DEFAULT_PARTITION__'))).toMatch(/NULL partition value/);
    expect(await rows(t)).toEqual(['not-a-date', 'null']);
  });

  it('partition.timestamp-pattern over several keys and partition.timestamp-formatter', async () => {
    const t = await table(
      [
        { name: 'year', type: 'STRING' },
        { name: 'month', type: 'STRING' },
        { name: 'day', type: 'STRING' },
        { name: 'v', type: 'INT' },
      ],
      ['year', 'month', 'day'],
      { 'partition.timestamp-pattern': '$year$month$day', 'partition.timestamp-formatter': 'yyyyMMdd', 'partition.expiration-time': '5 d' },
    );
    await t.append([
      { year: '2024', month: '06', day: '01', v: 1 },
      { year: '2024', month: '06', day: '24', v: 2 },
      { year: '2024', month: '06', day: '26', v: 3 },
    ]);
    const s = await t.expirePartitions({ dryRun: true, now: () => local(30) });
    expect(s.partitions.map((p) => p.partition)).toEqual(['year=2024/month=06/day=01', 'year=2024/month=06/day=24']);
    expect(s.partitions[1]!.time).toBe('2024-06-24T00:00:00.000');
  });

  it('update-time: by the creation of the newest file of each partition', async () => {
    const t = await dailyTable([], { 'partition.expiration-strategy': 'update-time' });
    for (const [dt, day] of [
      ['a', 1],
      ['b', 20],
      ['a', 28],
      ['c', 10],
    ] as const) {
      const w = t.newBatchWrite({ now: () => local(day) });
      await w.write([{ dt, v: day }]);
      await t.newCommit({ expire: false }).commit({ messages: await w.prepareCommit() });
      await w.close();
    }
    const entries = await t.partitions();
    expect(entries.map((e) => [e.path, e.fileCount, e.lastFileCreationTime])).toEqual([
      ['dt=a', 2, local(28)],
      ['dt=b', 1, local(20)],
      ['dt=c', 1, local(10)],
    ]);
    const s = await t.expirePartitions({ expirationTimeMs: 7 * 86_400_000, now: () => local(30) });
    expect(s.partitions.map((p) => p.partition)).toEqual(['dt=b', 'dt=c']);
    expect(await rows(t)).toEqual(['a', 'a']);
  });

  it("keeps Paimon's order and limit (values sorted as strings, partition.expiration-max-num) and commits partition.expiration-batch-size per snapshot", async () => {
    const t = await dailyTable(['2024-06-03', '2024-06-01', '2024-06-04', '2024-06-02', '2024-06-29'], {
      'partition.expiration-time': '7 d',
      'partition.expiration-max-num': '3',
      'partition.expiration-batch-size': '2',
    });
    const s = await t.expirePartitions({ now: () => local(30) });
    expect(s.partitions.map((p) => p.partition)).toEqual(['dt=2024-06-01', 'dt=2024-06-02', 'dt=2024-06-03']);
    expect(s.deferred).toBe(1);
    expect(s.snapshotIds).toEqual([6, 7]);
    expect(await rows(t)).toEqual(['2024-06-04', '2024-06-29']);
  });

  it('needs an expiration time and a partitioned table', async () => {
    await expect((await dailyTable(['2024-06-01'])).expirePartitions({})).rejects.toThrow(MaintenanceArgumentError);
    await expect((await dailyTable(['2024-06-01'])).expirePartitions({})).rejects.toThrow(/does not set 'partition\.expiration-time'/);
    const flat = await table([{ name: 'v', type: 'INT' }], [], { 'partition.expiration-time': '1 d' });
    await expect(flat.expirePartitions({})).rejects.toThrow(/not partitioned/);
  });
});

describe('partition expiration on the commit path', () => {
  const appendAt = async (t: Table, now: number, dt: string, commitUser = 'w'): Promise<void> => {
    const w = t.newBatchWrite();
    await w.write([{ dt, v: 1 }]);
    const c = t.newCommit({ now: () => now, commitUser, expire: false });
    await c.commit({ messages: await w.prepareCommit() });
    await w.close();
  };

  it('checks once per partition.expiration-check-interval, as Java: the first check one interval after the committer starts', async () => {
    const t = await dailyTable([], { 'partition.expiration-time': '7 d', 'partition.expiration-check-interval': '1 h' });
    await appendAt(t, local(30, 12), '2024-06-01');
    await appendAt(t, local(30, 12), '2024-06-29');
    await appendAt(t, local(30, 12) + 30 * 60_000, '2024-06-29');
    expect(await rows(t)).toEqual(['2024-06-01', '2024-06-29', '2024-06-29']);
    await appendAt(t, local(30, 13) + 60_000, '2024-06-30');
    expect(await rows(t)).toEqual(['2024-06-29', '2024-06-29', '2024-06-30']);
    expect((await t.snapshotManager.latest())!.commitKind).toBe('OVERWRITE');
  });

  it('checks after every commit with an interval of 0, and at once after a batch commit with end-input.check-partition-expire', async () => {
    const eager = await dailyTable([], { 'partition.expiration-time': '7 d', 'partition.expiration-check-interval': '0 s' });
    await appendAt(eager, local(30), '2024-06-01');
    expect(await rows(eager)).toEqual([]);
    const endInput = await dailyTable([], { 'partition.expiration-time': '7 d', 'end-input.check-partition-expire': 'true' });
    await appendAt(endInput, local(30), '2024-06-29');
    await appendAt(endInput, local(30), '2024-06-01');
    expect(await rows(endInput)).toEqual(['2024-06-29']);
    const writeOnly = await dailyTable([], {
      'partition.expiration-time': '7 d',
      'partition.expiration-check-interval': '0 s',
      'write-only': 'true',
    });
    await appendAt(writeOnly, local(30), '2024-06-01');
    expect(await rows(writeOnly)).toEqual(['2024-06-01']);
  });
});

describe('drop partitions', () => {
  it('drops by full or partial spec in one snapshot, and refuses what matches nothing or names no partition key', async () => {
    const t = await table(
      [
        { name: 'dt', type: 'STRING' },
        { name: 'hr', type: 'INT' },
        { name: 'v', type: 'INT' },
      ],
      ['dt', 'hr'],
    );
    await t.append([
      { dt: 'a', hr: 1, v: 1 },
      { dt: 'a', hr: 2, v: 2 },
      { dt: 'b', hr: 1, v: 3 },
      { dt: 'c', hr: 1, v: 4 },
    ]);
    await expect(t.dropPartitions([{ dt: 'zz' }])).rejects.toThrow(PartitionNotFoundError);
    await expect(t.dropPartitions([{ dt: 'zz' }])).rejects.toThrow(
      /no partition of .* matches 'dt=zz'; partitions: dt=a\/hr=1, dt=a\/hr=2, dt=b\/hr=1, dt=c\/hr=1/,
    );
    await expect(t.dropPartitions([{ v: '1' }])).rejects.toThrow(CommitInputError);
    await expect(t.dropPartitions([{}])).rejects.toThrow(/at least one partition key/);
    const dry = await t.dropPartitions([{ dt: 'a' }, { dt: 'c', hr: '1' }], { dryRun: true });
    expect(dry.partitions.map((p) => p.partition)).toEqual(['dt=a/hr=1', 'dt=a/hr=2', 'dt=c/hr=1']);
    expect((await t.snapshotManager.latest())!.id).toBe(1);
    const s = await t.dropPartitions([{ dt: 'a' }, { dt: 'c', hr: '1' }]);
    expect(s).toMatchObject({ snapshotIds: [2], recordCount: 3, fileCount: 3 });
    expect((await t.partitions()).map((e) => e.path)).toEqual(['dt=b/hr=1']);
    expect((await t.partitions({ snapshotId: 1 })).map((e) => e.path)).toHaveLength(4);
  });
});
