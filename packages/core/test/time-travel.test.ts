import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { serializeTag } from '@tidemark/format';
import { SnapshotManager } from '../src/snapshot-manager.js';
import { TagManager } from '../src/tag-manager.js';
import { parseTimestampMillis, resolveSnapshot } from '../src/time-travel.js';
import { SnapshotNotFoundError, TagNotFoundError, TimeTravelError } from '../src/errors.js';
import { TablePaths, makeSnapshot, memoryRoot, range, writeSnapshots } from './helpers.js';

function setup() {
  const io = new MemoryFileIO();
  const paths = new TablePaths(memoryRoot());
  return { io, paths, table: { snapshots: new SnapshotManager(io, paths), tags: new TagManager(io, paths) } };
}

describe('resolveSnapshot', () => {
  it('returns the latest without selectors, null on an empty table', async () => {
    const { io, paths, table } = setup();
    expect(await resolveSnapshot(table)).toBeNull();
    await writeSnapshots(io, paths, range(1, 4), { latest: '3' });
    expect((await resolveSnapshot(table))?.id).toBe(4);
  });

  it('resolves id, timestamp and tag', async () => {
    const { io, paths, table } = setup();
    await writeSnapshots(io, paths, range(1, 5));
    await io.write(paths.tagPath('v1'), serializeTag({ ...makeSnapshot(2, 2000), tagCreateTime: { millis: 5000, nanoOfMillis: 0 } }));
    expect((await resolveSnapshot(table, { snapshotId: 3 }))?.id).toBe(3);
    expect((await resolveSnapshot(table, { timestampMs: 4500 }))?.id).toBe(4);
    const tag = await resolveSnapshot(table, { tag: 'v1' });
    expect(tag?.id).toBe(2);
    expect(tag?.timeMillis).toBe(2000);
  });

  it('rejects conflicting or invalid selectors as user errors', async () => {
    const { io, paths, table } = setup();
    await writeSnapshots(io, paths, range(1, 2));
    const e1 = await resolveSnapshot(table, { snapshotId: 1, tag: 'x' }).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(TimeTravelError);
    expect((e1 as TimeTravelError).userError).toBe(true);
    await expect(resolveSnapshot(table, { snapshotId: 0 })).rejects.toBeInstanceOf(TimeTravelError);
    await expect(resolveSnapshot(table, { snapshotId: 1.5 })).rejects.toBeInstanceOf(TimeTravelError);
    await expect(resolveSnapshot(table, { timestampMs: Number.NaN })).rejects.toBeInstanceOf(TimeTravelError);
    await expect(resolveSnapshot(table, { snapshotId: 9 })).rejects.toBeInstanceOf(SnapshotNotFoundError);
    await expect(resolveSnapshot(table, { timestampMs: 999 })).rejects.toThrow(
      /earliest snapshot 1 was committed at 1970-01-01T00:00:01.000Z/,
    );
  });

  it('lists available tags (at most 10) for an unknown tag', async () => {
    const { io, paths, table } = setup();
    await writeSnapshots(io, paths, range(1, 1));
    const names = range(1, 13).map((i) => `t${String(i).padStart(2, '0')}`);
    for (const n of names) await io.write(paths.tagPath(n), serializeTag(makeSnapshot(1, 1000)));
    await io.write(`${paths.tagDir}/.tag-t99.abc.tmp`, 'partial');
    expect(await table.tags.names()).toEqual(names);
    const err = await resolveSnapshot(table, { tag: 'prod' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TagNotFoundError);
    const msg = (err as Error).message;
    expect(msg).toContain("tag 'prod' does not exist; available tags: 't01', 't02'");
    expect(msg).toContain("'t10' and 3 more");
    expect(msg).not.toContain("'t11'");
  });
});

describe('parseTimestampMillis', () => {
  it('accepts epoch millis and ISO-8601 (UTC unless an offset is given)', () => {
    expect(parseTimestampMillis('1756266933641')).toBe(1756266933641);
    expect(parseTimestampMillis('2024-01-01')).toBe(Date.UTC(2024, 0, 1));
    expect(parseTimestampMillis('2024-01-01T10:00:00')).toBe(Date.UTC(2024, 0, 1, 10));
    expect(parseTimestampMillis('2024-01-01 10:00:00.123456')).toBe(Date.UTC(2024, 0, 1, 10, 0, 0, 123));
    expect(parseTimestampMillis('2024-01-01T10:00:00+02:00')).toBe(Date.UTC(2024, 0, 1, 8));
    expect(parseTimestampMillis('2024-01-01T10:00Z')).toBe(Date.UTC(2024, 0, 1, 10));
    expect(() => parseTimestampMillis('yesterday')).toThrow(TimeTravelError);
    expect(() => parseTimestampMillis('2024-13-01')).toThrow(TimeTravelError);
  });
});
