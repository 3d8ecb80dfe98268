/**
 * The writers' compaction durations reach the pipeline's observer (`IngestObserver.compacted`) and
 * the `tidemark_ingest_compaction_duration_seconds` histogram; `combineObservers` tells every
 * observer everything, so a service that logs and serves metrics misses no event.
 */
import { describe, expect, it } from 'vitest';
import type { BucketCompactionReport } from '@tidemark/core';
import { ArraySource, memoryTable, pkDvTable, promSamples } from './helpers.js';
import { IngestMetrics, combineObservers, runIngest, type CheckpointInfo, type IngestObserver } from '../src/index.js';

describe('compaction durations of an ingest pipeline', () => {
  it('every compaction a writer finished is observed once and lands in the duration histogram', async () => {
    const { io, location } = await pkDvTable(
      `memory://compaction-metrics-${process.pid}-${Math.random().toString(16).slice(2)}/db.db/t`,
      2,
    );
    const metrics = new IngestMetrics();
    const reports: BucketCompactionReport[] = [];
    const checkpoints: CheckpointInfo[] = [];
    await runIngest({
      table: location,
      fileIO: io,
      source: new ArraySource(60),
      commitUser: 'compaction-metrics',
      checkpointEvery: 10,
      observer: combineObservers(metrics, { compacted: (r) => reports.push(r), checkpointCommitted: (c) => checkpoints.push(c) }),
    });
    const m = promSamples(await metrics.registry.metrics());
    // 6 checkpoints, each writing to both buckets: from the second on, level 0 is compacted away in each.
    const carried = checkpoints.reduce((n, c) => n + c.compaction.buckets, 0);
    expect(carried).toBeGreaterThanOrEqual(10);
    expect(reports.length).toBeGreaterThanOrEqual(carried);
    expect(new Set(reports.map((r) => r.bucket))).toEqual(new Set([0, 1]));
    expect(m.get('tidemark_ingest_compaction_duration_seconds_count')).toBe(reports.length);
    const seconds = reports.reduce((s, r) => s + r.durationMs / 1000, 0);
    expect(m.get('tidemark_ingest_compaction_duration_seconds_sum')).toBeCloseTo(seconds, 6);
    expect(m.get('tidemark_ingest_compactions_total')).toBe(carried);
  });

  it('an append table has no compactions to time', async () => {
    const { io, location } = await memoryTable();
    const metrics = new IngestMetrics();
    await runIngest({ table: location, fileIO: io, source: new ArraySource(30), commitUser: 'a', checkpointEvery: 10, observer: metrics });
    expect(promSamples(await metrics.registry.metrics()).get('tidemark_ingest_compaction_duration_seconds_count')).toBe(0);
  });

  it('combineObservers calls each observer in order, binds methods, and leaves out what none has', () => {
    const calls: string[] = [];
    class Counting implements IngestObserver {
      n = 0;
      recordRead(): void {
        this.n++;
        calls.push('counting');
      }
    }
    const counting = new Counting();
    const both = combineObservers(counting, undefined, { recordRead: () => calls.push('second'), stopping: () => calls.push('stop') });
    both.recordRead!();
    both.stopping!();
    expect(calls).toEqual(['counting', 'second', 'stop']);
    expect(counting.n).toBe(1);
    expect(both.ended).toBeUndefined();
    expect(both.compacted).toBeUndefined();
  });
});
