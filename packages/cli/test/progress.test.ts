import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { formatBytes, formatDuration, ProgressReporter, writeJsonSummary } from '../src/output/progress.js';
import { MemoryStream } from './helpers.js';

describe('ProgressReporter', () => {
  it('draws nothing when not enabled (piped)', () => {
    const out = new MemoryStream();
    const p = new ProgressReporter({ stream: out, enabled: false, label: 'x', total: 10 });
    p.add(5, 100);
    p.finish();
    expect(out.text).toBe('');
  });
  it('renders counts, bytes, a bar and an ETA', () => {
    let t = 0;
    const p = new ProgressReporter({
      stream: new MemoryStream(),
      enabled: true,
      label: 'deleting',
      unit: 'files',
      total: 4,
      totalBytes: 4096,
      now: () => t,
      barWidth: 8,
    });
    t = 10_000;
    p.add(1, 1024);
    expect(p.render()).toBe('deleting [##------] 1/4 files 1.0 KiB/4.0 KiB ETA 30s');
  });
  it('redraws at most once per interval on one line, and clears it at the end', () => {
    let t = 0;
    const out = new MemoryStream();
    const p = new ProgressReporter({ stream: out, enabled: true, label: 'scan', minIntervalMs: 100, now: () => t });
    p.add();
    p.add();
    t = 50;
    p.add();
    t = 150;
    p.add();
    const draws = out.text.split('\r\x1b[2K').filter(Boolean);
    expect(draws).toEqual(['scan 1 items', 'scan 4 items']);
    expect(out.text).not.toContain('\n');
    p.finish();
    expect(out.text.endsWith('\r\x1b[2K')).toBe(true);
  });
  it('with showRate, adds the rate and the elapsed time (bytes/s when bytes are counted, else units/s)', () => {
    let t = 0;
    const rows = new ProgressReporter({
      stream: new MemoryStream(),
      enabled: true,
      label: 'reading',
      unit: 'rows',
      now: () => t,
      showRate: true,
    });
    t = 4_000;
    rows.add(10_000);
    expect(rows.render()).toBe('reading 10000 rows 2.5k rows/s 4s');
    rows.add(0, 8 * 1024 * 1024);
    expect(rows.render()).toBe('reading 10000 rows 8.0 MiB 2.0 MiB/s 4s');
  });
  it('formats bytes and durations', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(5 * 1024 ** 3)).toBe('5.0 GiB');
    expect(formatDuration(80_000)).toBe('1m20s');
    expect(formatDuration(3_900_000)).toBe('1h05m');
  });
});

describe('writeJsonSummary', () => {
  it('prints exactly one JSON object line, bigints by the BIGINT rule', async () => {
    const out = new MemoryStream();
    await writeJsonSummary(out, { snapshotsExpired: 3, bytesFreed: 2n ** 60n, filesDeleted: 7n, dryRun: false });
    expect(out.text).toBe('{"snapshotsExpired":3,"bytesFreed":"1152921504606846976","filesDeleted":7,"dryRun":false}\n');
  });
  it('waits for drain', async () => {
    let released = false;
    const slow = new Writable({
      highWaterMark: 1,
      write(_c, _e, cb) {
        setTimeout(() => {
          released = true;
          cb();
        }, 5);
      },
    });
    await writeJsonSummary(slow, { a: 1 });
    expect(released).toBe(true);
  });
});
