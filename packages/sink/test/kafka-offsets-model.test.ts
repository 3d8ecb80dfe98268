/**
 * The Kafka offsets a pipeline stores advance only with a committed snapshot. A seeded model run
 * ingests a three-partition topic on an in-memory client while storage requests fail at random:
 * before a write (nothing written) and after one (written, but the caller sees an error: the
 * commit's unknown outcome). The pipeline is restarted after every failure, in self-contained mode
 * (offsets in the snapshot properties) and with a state store. After every run, the table holds
 * exactly the messages before the offsets stored in the latest snapshot of the pipeline's commit
 * user (no duplicate, no gap), those offsets never move backwards, and no offset reported to the
 * consumer group (monitoring) is ahead of them.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { openTable } from '@tidemark/core';
import { FileIOCheckpointStore, KafkaSource, OFFSETS_PROPERTY, runIngest } from '../src/index.js';
import { instrumentFileIO } from '../../../test/support/instrumented-file-io.mjs';
import { seededRandom } from '../../../test/support/seeded-random.mjs';
import { memoryTable, tableIds } from './helpers.js';
import { kafka } from './memory-kafka.js';

const PARTITIONS = 3;
const MESSAGES = 90;

class InjectedFault extends Error {}

/** The offsets (partition → next offset) in the latest snapshot of `commitUser`, or none. */
async function storedOffsets(io: FileIO, location: string, commitUser: string): Promise<number[]> {
  const t = await openTable(location, { fileIO: io });
  const latest = await t.snapshotManager.latestId();
  for (let id = latest ?? 0; id >= 1; id--) {
    const s = await t.snapshotManager.tryGet(id);
    if (s === null) break;
    if (s.commitUser !== commitUser) continue;
    const raw = s.properties?.[OFFSETS_PROPERTY];
    expect(raw, `snapshot ${id} of ${commitUser} carries its offsets`).toBeDefined();
    const offsets = (JSON.parse(raw!) as { offset: Record<string, Record<string, number>> }).offset['t']!;
    return Array.from({ length: PARTITIONS }, (_, p) => offsets[p] ?? 0);
  }
  return Array.from({ length: PARTITIONS }, () => 0);
}

/** Message i went to partition i mod 3 at offset floor(i / 3): the ids before `offsets`. */
function idsBefore(offsets: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < MESSAGES; i++) if (Math.floor(i / PARTITIONS) < offsets[i % PARTITIONS]!) out.push(i);
  return out;
}

describe('Kafka offsets advance only with a committed snapshot', () => {
  for (const mode of ['self-contained', 'state-store'] as const) {
    for (const seed of [1, 2, 3]) {
      it(`${mode}, seed ${seed}: storage faults at random, restarts until the topic is read`, async () => {
        const random = seededRandom(seed * 7919 + (mode === 'state-store' ? 1 : 0));
        const k = kafka({ t: PARTITIONS });
        for (let i = 0; i < MESSAGES; i++) k.add('t', i % PARTITIONS, JSON.stringify({ id: i, v: `v${i}` }));
        const { io: base, location } = await memoryTable();
        const stateIO = new MemoryFileIO();
        let faults = 0;
        let armed = true;
        const failing = (): boolean => armed && random() < 0.04;
        const io = instrumentFileIO(base, {
          // A rejected promise, as every FileIO method fails (they are async).
          async before(r) {
            if ((r.kind === 'put' || r.kind === 'conditional-put') && failing()) {
              faults++;
              throw new InjectedFault(`injected before ${r.method} ${r.path ?? ''}`);
            }
          },
          after(r) {
            if ((r.kind === 'put' || r.kind === 'conditional-put') && failing()) {
              faults++;
              throw new InjectedFault(`injected after ${r.method} ${r.path ?? ''}`);
            }
          },
        });
        let previous = Array.from({ length: PARTITIONS }, () => 0);
        let done = false;
        for (let run = 0; run < 200 && !done; run++) {
          // The last runs go without faults, so that the pipeline finishes.
          armed = run < 150;
          try {
            const summary = await runIngest({
              table: location,
              fileIO: io,
              source: new KafkaSource({ connection: { brokers: ['memory:1'] }, topics: ['t'], untilEnd: true, clientFactory: () => k }),
              ...(mode === 'self-contained'
                ? { commitUser: 'pipe' }
                : { stateStore: new FileIOCheckpointStore(stateIO, `memory://state-${mode}-${seed}/p`) }),
              checkpointEvery: 1 + Math.floor(random() * 12),
              logger: { warn: () => undefined },
            });
            done = summary.status === 'source-done';
          } catch (e) {
            if (!(e instanceof InjectedFault) && !String((e as Error)?.message).includes('injected')) {
              // A fault may surface wrapped (a failed commit names its cause): anything else is a bug.
              const cause = (e as { cause?: unknown }).cause;
              if (!(cause instanceof InjectedFault)) throw e;
            }
          }
          const t = await openTable(location, { fileIO: base });
          const latest = await t.snapshotManager.latest();
          const user = latest?.commitUser ?? 'pipe';
          const offsets = await storedOffsets(base, location, user);
          const ids = await tableIds(base, location);
          expect(ids, `run ${run}: the table holds exactly the messages before the stored offsets ${offsets.join(',')}`).toEqual(
            idsBefore(offsets),
          );
          for (let p = 0; p < PARTITIONS; p++)
            expect(offsets[p], `run ${run}: partition ${p} moved backwards`).toBeGreaterThanOrEqual(previous[p]!);
          previous = offsets;
          for (const c of k.commits) {
            for (const r of c)
              expect(r.offset, `run ${run}: group offset of partition ${r.partition}`).toBeLessThanOrEqual(offsets[r.partition]!);
          }
        }
        expect(done).toBe(true);
        expect(await tableIds(base, location)).toEqual([...Array(MESSAGES).keys()]);
        expect(faults).toBeGreaterThan(3);
      }, 120_000);
    }
  }
});
