/**
 * Deletion-vector tables whose merge engine builds on older values (partial-update, aggregation,
 * deduplicate with `sequence.field`), on local disk and on the real S3 server. Batch reads take
 * each key's one live record of levels ≥ 1 as it is, so every compaction that moves new records of
 * a key up (and marks its older record deleted) must merge the older record in: a column the new
 * records leave null keeps its value, a sum goes on from the stored one, an older sequence value
 * does not win. Each engine's random writes are checked against a model of it:
 * - table writes (the writer compacts at each commit): every commit's last snapshot, level 0 empty;
 * - `changelog-producer` = `lookup`: the change stream replays, strictly, into the same rows;
 * - `write-only` tables compacted by `tidemark compact` after several writes, then `compact --full`;
 * - the exactly-once sink, writers compacting at each checkpoint: partial rows from records with a
 *   row kind, and aggregation from a Debezium CDC file (updates retract their before image);
 * - the Java-written deletion-vector table pk-dv, compacted by `tidemark compact` and written on;
 * - first-row and `changelog-producer` = `full-compaction` are refused with deletion vectors.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { RowObject, Table, TableSpec } from '@tidemark/core';
import { liveEntries, openTable } from '@tidemark/core';
import { CDC_ROW_KIND_FIELD, CdcJsonLinesSource, type ReplayableSource } from '@tidemark/sink';
import { storageBackends } from './support/backends.js';
import { runMain, useCliS3Env } from './support/cli-main.js';
import { fixturesDir } from './support/fixtures.js';
import { openFixtureCopy } from './support/fixture-copy.js';
import { PK_MOR_LATEST, type PkMorRow } from './support/fixture-rows.js';
import { suiteCatalog } from './support/suite-catalog.js';
import { seededRandom } from './support/seeded-random.mjs';
import { arraySource, ingestCollectingCheckpoints } from './support/sink-runs.js';
import { columns } from './support/table-definitions.mjs';

type Row = Record<string, unknown> & { k: number };
type Kind = '+I' | '+U' | '-U' | '-D';
type Op = { row: Row; op: Kind };

useCliS3Env();
const fixtures = fixturesDir('deletion vectors with merge engines on the Java pk-dv table');

/** A merge engine's table options, random ops and model (each instance keeps its own state). */
interface Engine {
  readonly name: string;
  readonly fields: TableSpec['fields'];
  readonly options: Record<string, string>;
  /**
   * The next op of key `k` (state: the model's row), or null to skip; `fresh`: no delete of `k`
   * since the last compaction (a delete and a later insert of one key merge into the insert alone
   * before any lookup, in Java too, so the generators keep them apart).
   */
  op(rand: () => number, k: number, state: Row | undefined, fresh: boolean): Op | null;
  apply(model: Map<number, Row>, op: Op): void;
  /** Level 0 was compacted away: what the model must forget (the deletes compaction drops). */
  compacted?(): void;
}

const pick = <T>(rand: () => number, v: T): T | null => (rand() < 0.4 ? null : v);
const int = (rand: () => number, n: number): number => Math.floor(rand() * n);
const plus = (a: unknown, b: bigint): bigint => (a === null || a === undefined ? b : (a as bigint) + b);

const partialUpdate = (): Engine => ({
  name: 'partial-update',
  fields: columns('k INT NOT NULL', 'a STRING', 'b BIGINT', 'c STRING'),
  options: { 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true' },
  op(rand, k, state, fresh) {
    if (!fresh) return null;
    if (state && rand() < 0.1) return { row: { ...state }, op: '-D' };
    return {
      row: { k, a: pick(rand, `a${int(rand, 1000)}`), b: pick(rand, BigInt(int(rand, 1000))), c: pick(rand, `c${int(rand, 1000)}`) },
      op: '+I',
    };
  },
  apply(model, { row, op }) {
    if (op === '-D') return void model.delete(row.k);
    const cur = model.get(row.k) ?? { k: row.k, a: null, b: null, c: null };
    model.set(row.k, { k: row.k, a: row.a ?? cur.a, b: row.b ?? cur.b, c: row.c ?? cur.c });
  },
});

const sequenceGroup = (): Engine => ({
  name: 'partial-update with a sequence group',
  fields: columns('k INT NOT NULL', 'a STRING', 'g BIGINT', 'b STRING'),
  options: { 'merge-engine': 'partial-update', 'fields.g.sequence-group': 'a' },
  op(rand, k, state) {
    // A key's first record carries a group sequence: a key's single record is read unmerged.
    const g = state === undefined ? BigInt(int(rand, 10)) : pick(rand, BigInt(int(rand, 10)));
    return { row: { k, a: pick(rand, `a${int(rand, 100)}`), g, b: pick(rand, `b${int(rand, 100)}`) }, op: '+I' };
  },
  apply(model, { row }) {
    const cur = model.get(row.k) ?? { k: row.k, a: null, g: null, b: null };
    const next = { ...cur };
    // The group (a, g) takes the record's values, nulls included, when its g is not older.
    if (row.g !== null && (cur.g === null || (row.g as bigint) >= (cur.g as bigint))) Object.assign(next, { a: row.a, g: row.g });
    if (row.b !== null) next.b = row.b;
    model.set(row.k, next);
  },
});

/** sum, max and last_non_null_value, with retractions (-U, and -D without remove-record-on-delete). */
const aggregation = (): Engine => ({
  name: 'aggregation (sum, max, last_non_null_value)',
  fields: columns('k INT NOT NULL', 'n BIGINT', 'm INT', 's STRING'),
  options: {
    'merge-engine': 'aggregation',
    'fields.n.aggregate-function': 'sum',
    'fields.m.aggregate-function': 'max',
    'fields.m.ignore-retract': 'true',
    'fields.s.ignore-retract': 'true',
  },
  op(rand, k, state) {
    if (state && rand() < 0.15)
      return { row: { k, n: BigInt(int(rand, 50)), m: int(rand, 100), s: 'ignored' }, op: rand() < 0.5 ? '-U' : '-D' };
    return {
      row: { k, n: pick(rand, BigInt(int(rand, 50))), m: pick(rand, int(rand, 100)), s: pick(rand, `s${int(rand, 1000)}`) },
      op: '+I',
    };
  },
  apply(model, { row, op }) {
    const cur = model.get(row.k) ?? { k: row.k, n: null, m: null, s: null };
    const n = row.n as bigint | null;
    if (op === '-U' || op === '-D') {
      if (n !== null) model.set(row.k, { ...cur, n: plus(cur.n, -n) });
      else model.set(row.k, cur);
      return;
    }
    const m = row.m as number | null;
    model.set(row.k, {
      k: row.k,
      n: n === null ? cur.n : plus(cur.n, n),
      m: m === null ? cur.m : cur.m === null ? m : Math.max(cur.m as number, m),
      s: row.s ?? cur.s,
    });
  },
});

/** Functions that keep the first or older values: min, first_non_null_value, listagg, bool_or. */
const firstValues = (): Engine => ({
  name: 'aggregation (min, first_non_null_value, listagg, bool_or)',
  fields: columns('k INT NOT NULL', 'lo INT', 'first STRING', 'tags STRING', 'any BOOLEAN'),
  options: {
    'merge-engine': 'aggregation',
    'fields.lo.aggregate-function': 'min',
    'fields.first.aggregate-function': 'first_non_null_value',
    'fields.tags.aggregate-function': 'listagg',
    'fields.any.aggregate-function': 'bool_or',
  },
  op(rand, k) {
    return {
      row: {
        k,
        lo: pick(rand, int(rand, 1000)),
        first: pick(rand, `f${int(rand, 1000)}`),
        tags: pick(rand, `t${int(rand, 10)}`),
        any: pick(rand, rand() < 0.2),
      },
      op: '+I',
    };
  },
  apply(model, { row }) {
    const cur = model.get(row.k) ?? { k: row.k, lo: null, first: null, tags: null, any: null };
    model.set(row.k, {
      k: row.k,
      lo: row.lo === null ? cur.lo : cur.lo === null ? row.lo : Math.min(cur.lo as number, row.lo as number),
      first: cur.first ?? row.first,
      tags: row.tags === null ? cur.tags : cur.tags === null ? row.tags : `${cur.tags as string},${row.tags as string}`,
      any: row.any === null ? cur.any : cur.any === null ? row.any : (cur.any as boolean) || (row.any as boolean),
    });
  },
});

/**
 * Deduplicate with `sequence.field` = ts: the record with the highest ts wins (nulls lowest, ties:
 * the later one), deletes too. Compaction drops a winning delete, after which a record with a
 * smaller ts shows again (as in Java, apache/paimon#5387): the model forgets it then.
 */
const sequenceField = (): Engine => {
  const history = new Map<number, Op[]>();
  const best = (h: readonly Op[]): Op =>
    h.reduce((b, x) => (b.row.ts === null || (x.row.ts !== null && (x.row.ts as bigint) >= (b.row.ts as bigint)) ? x : b));
  return {
    name: 'deduplicate with sequence.field',
    fields: columns('k INT NOT NULL', 'v STRING', 'ts BIGINT'),
    options: { 'sequence.field': 'ts' },
    op(rand, k, state, fresh) {
      if (!fresh) return null;
      const ts = rand() < 0.1 ? null : BigInt(int(rand, 30));
      if (state && rand() < 0.2) return { row: { ...state, ts }, op: '-D' };
      return { row: { k, v: `v${int(rand, 1000)}`, ts }, op: '+I' };
    },
    apply(model, op) {
      const h = [...(history.get(op.row.k) ?? []), op];
      history.set(op.row.k, h);
      const b = best(h);
      if (b.op === '-D') model.delete(op.row.k);
      else model.set(op.row.k, b.row);
    },
    compacted() {
      for (const [k, h] of history) {
        const b = best(h);
        if (b.op === '-D') history.delete(k);
        else history.set(k, [b]);
      }
    },
  };
};

const ENGINES: ReadonlyArray<readonly [string, () => Engine]> = [partialUpdate, sequenceGroup, aggregation, firstValues, sequenceField].map(
  (f) => [f().name, f] as const,
);

const byKey = (a: Row, b: Row): number => a.k - b.k;
const modelRows = (model: Map<number, Row>): Row[] => [...model.values()].sort(byKey);

async function rowsAt(t: Table, snapshotId?: number): Promise<Row[]> {
  const read = t.newRead(snapshotId === undefined ? {} : { snapshotId });
  return (await read.toArrowTable())
    .toArray()
    .map((r) => r.toJSON() as Row)
    .sort(byKey);
}

async function levelZeroFiles(t: Table, snapshotId: number): Promise<number> {
  let n = 0;
  for (const e of (await liveEntries(t.fileIO, t.paths, await t.snapshotManager.snapshot(snapshotId))).values())
    if (e.file.level === 0) n++;
  return n;
}

/** `tidemark compact <table> --json [extra]` succeeds quietly and leaves no level-0 file. */
async function cliCompact(t: Table, ...extra: string[]): Promise<void> {
  const r = await runMain(['compact', t.location, '--json', ...extra]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(await levelZeroFiles(t, (await t.snapshotManager.latestId())!)).toBe(0);
}

/** Draws ops of one write (`count` draws over `keys` keys) and applies them to the model. */
function drawOps(engine: Engine, rand: () => number, model: Map<number, Row>, deleted: Set<number>, keys: number, count: number): Op[] {
  const ops: Op[] = [];
  for (let i = 0; i < count; i++) {
    const k = int(rand, keys);
    const op = engine.op(rand, k, model.get(k), !deleted.has(k));
    if (op === null) continue;
    if (op.op === '-D') deleted.add(k);
    engine.apply(model, op);
    ops.push(op);
  }
  return ops;
}

async function write(t: Table, ops: readonly Op[]): Promise<readonly number[]> {
  const result = await t.append(
    ops.map((o): RowObject => ({ ...o.row, op: o.op })),
    { rowKindField: 'op' },
  );
  expect(result.status).toBe('committed');
  return result.status === 'committed' ? result.snapshotIds : [];
}

/**
 * Replays the change stream of snapshots 1..`last` and checks the replayed rows at `at` against
 * `expected`, strictly: a -U/-D retracts the row the replay holds, a +I adds an absent key, a +U
 * follows the -U of its key. Returns how many snapshots were checked.
 */
async function replayChangelog(t: Table, last: number, expected: ReadonlyMap<number, Row[]>): Promise<number> {
  const replay = new Map<number, Row>();
  let previous = '';
  let checked = 0;
  let current: number | null = null;
  const verify = (id: number): void => {
    const want = expected.get(id);
    if (want === undefined) return;
    expect([...replay.values()].sort(byKey), `rows replayed up to snapshot ${id}`).toEqual(want);
    checked++;
  };
  for await (const b of t.newStreamRead({ from: 'earliest', to: last, pollIntervalMs: 1 })) {
    if (current !== null && b.snapshotId !== current) verify(current);
    current = b.snapshotId;
    for (const r of b.batch.toArray()) {
      const { _row_kind: kind, ...row } = r.toJSON() as Row & { _row_kind: Kind };
      const where = `snapshot ${b.snapshotId}: ${kind} ${JSON.stringify(row, (_, v: unknown) => (typeof v === 'bigint' ? `${v}` : v))}`;
      if (kind === '+I' || kind === '+U') {
        expect(replay.has(row.k), where).toBe(false);
        if (kind === '+U') expect(previous, where).toBe(`-U ${row.k}`);
        replay.set(row.k, row as Row);
      } else {
        expect(replay.get(row.k), where).toEqual(row);
        replay.delete(row.k);
      }
      previous = `${kind} ${row.k}`;
    }
  }
  if (current !== null) verify(current);
  return checked;
}

/** Bigints as numbers (JSON sources carry numbers). */
const jsonRow = (row: Row): Record<string, unknown> =>
  Object.fromEntries(Object.entries(row).map(([c, v]) => [c, typeof v === 'bigint' ? Number(v) : v]));

describe.each(storageBackends('dv merge engines'))('deletion vectors with merge engines that build on older values on $name', (backend) => {
  describe.skipIf(!backend.available)(`(${backend.name})`, () => {
    const env = suiteCatalog(backend);
    let n = 0;

    async function create(engine: Engine, options: Record<string, string> = {}): Promise<Table> {
      const name = `db.t${++n}`;
      await env.catalog.createTable(name, {
        fields: engine.fields,
        primaryKeys: ['k'],
        // A low trigger keeps several levels, so that lookups reach past a compaction's output level.
        options: {
          bucket: '2',
          'deletion-vectors.enabled': 'true',
          'num-sorted-run.compaction-trigger': '3',
          'snapshot.num-retained.min': '1000',
          'snapshot.num-retained.max': '1000',
          ...engine.options,
          ...options,
        },
      });
      return openTable(env.catalog.tableLocation(name), { fileIO: env.wh.io });
    }

    /**
     * Runs the sink over `source` (writers compacting at each checkpoint) and checks the snapshot
     * each checkpoint committed against the model's rows at its source offset (`expected`, keyed
     * by the offset as JSON), with level 0 empty. Returns how many checkpoints were checked.
     */
    async function ingestAndCheck(
      t: Table,
      source: ReplayableSource<Record<string, unknown>>,
      every: number,
      rowKindField: string,
      expected: ReadonlyMap<string, Row[]>,
    ): Promise<number> {
      const { summary, infos } = await ingestCollectingCheckpoints({
        table: t.location,
        fileIO: env.wh.io,
        source,
        checkpointEvery: every,
        parallelism: 2,
        rowKindField,
      });
      expect(summary.status).toBe('source-done');
      let checked = 0;
      for (const info of infos) {
        const committed = info.commits.filter((x) => x.result.status === 'committed');
        const last = committed[committed.length - 1]?.result;
        if (last?.status !== 'committed') continue;
        expect(await levelZeroFiles(t, last.snapshotId)).toBe(0);
        const want = expected.get(JSON.stringify(info.offset));
        expect(want, `checkpoint offset ${JSON.stringify(info.offset)}`).toBeDefined();
        expect(await rowsAt(t, last.snapshotId), `checkpoint ${info.checkpointId}`).toEqual(want);
        checked++;
      }
      return checked;
    }

    /**
     * Eight random writes, each compacted by its writer; every commit's last snapshot must read
     * like the model with level 0 empty. Returns the model's rows at each such snapshot.
     */
    async function writeAndCheck(t: Table, engine: Engine, seed: number): Promise<Map<number, Row[]>> {
      const rand = seededRandom(seed);
      const model = new Map<number, Row>();
      const at = new Map<number, Row[]>();
      for (let c = 0; c < 8; c++) {
        const ops = drawOps(engine, rand, model, new Set(), 40, 10 + int(rand, 40));
        const ids = await write(t, ops);
        engine.compacted?.();
        const last = ids[ids.length - 1]!;
        expect(await levelZeroFiles(t, last), `level-0 files after write ${c}`).toBe(0);
        expect(await rowsAt(t, last), `snapshot ${last} (write ${c})`).toEqual(modelRows(model));
        at.set(last, modelRows(model));
      }
      expect(model.size).toBeGreaterThan(20);
      return at;
    }

    it.each(ENGINES)('%s: every write (compacted by its writer) reads like the model, level 0 empty', async (_, make) => {
      const engine = make();
      await writeAndCheck(await create(engine), engine, 11);
    });

    it.each(ENGINES)("%s with changelog-producer 'lookup': the change stream replays into the model's rows", async (_, make) => {
      const engine = make();
      const t = await create(engine, { 'changelog-producer': 'lookup' });
      const at = await writeAndCheck(t, engine, 23);
      expect(await replayChangelog(t, (await t.snapshotManager.latestId())!, at)).toBe(at.size);
    });

    it.each(ENGINES)('%s, write-only: tidemark compact after several writes, then compact --full', async (_, make) => {
      const engine = make();
      const t = await create(engine, { 'write-only': 'true' });
      const rand = seededRandom(31);
      const model = new Map<number, Row>();
      const compact = async (...extra: string[]): Promise<void> => {
        await cliCompact(t, ...extra);
        engine.compacted?.();
        expect(await rowsAt(t), `after compact ${extra.join(' ')}`).toEqual(modelRows(model));
      };
      // A first write much larger than the later ones: their files are compacted alone into levels
      // above it (the size ratio keeps them apart), which must merge the records they replace.
      const first = Array.from({ length: 1500 }, (_, k) => engine.op(rand, k, undefined, true)!);
      for (const o of first) engine.apply(model, o);
      await write(t, first);
      await compact();
      for (let epoch = 0; epoch < 3; epoch++) {
        const deleted = new Set<number>();
        for (let w = 0; w < 3; w++) await write(t, drawOps(engine, rand, model, deleted, 40, 5 + int(rand, 15)));
        await compact();
      }
      const deleted = new Set<number>();
      for (let w = 0; w < 2; w++) await write(t, drawOps(engine, rand, model, deleted, 40, 10));
      await compact('--full');
      expect(model.size).toBeGreaterThan(20);
    });

    it('sink writers compacting at each checkpoint: partial rows read like the model at every checkpoint', async () => {
      const engine = partialUpdate();
      const t = await create(engine);
      const rand = seededRandom(5);
      const model = new Map<number, Row>();
      const every = 15;
      const records: Record<string, unknown>[] = [];
      const expected = new Map<string, Row[]>();
      for (let c = 0; c < 8; c++) {
        // One checkpoint's records (the writers compact at its end), padded with fresh keys.
        const ops = drawOps(engine, rand, model, new Set(), 30, every);
        while (ops.length < every) {
          const pad: Op = { row: { k: 1000 + records.length + ops.length, a: 'pad', b: null, c: null }, op: '+I' };
          engine.apply(model, pad);
          ops.push(pad);
        }
        for (const o of ops) records.push({ ...jsonRow(o.row), op: o.op });
        expected.set(JSON.stringify(records.length), modelRows(model));
      }
      expect(await ingestAndCheck(t, arraySource(records, 'array:dv-merge-engines'), every, 'op', expected)).toBe(8);
    });

    it('sink from a Debezium CDC file into an aggregation table: updates retract their before image', async () => {
      const engine = aggregation();
      const t = await create(engine);
      const rand = seededRandom(9);
      // Upstream rows by id; the target aggregates them by k.
      const upstream = new Map<number, Row>();
      const model = new Map<number, Row>();
      const lines: string[] = [];
      const expected = new Map<string, Row[]>();
      let bytes = 0;
      const upstreamRow = (): Row => ({
        k: int(rand, 25),
        n: BigInt(int(rand, 50)),
        m: pick(rand, int(rand, 100)),
        s: pick(rand, `s${int(rand, 100)}`),
      });
      for (let id = 0, e = 0; e < 150; e++) {
        const ids = [...upstream.keys()];
        const p = rand();
        let event: Record<string, unknown>;
        const changes: Op[] = [];
        if (ids.length > 5 && p < 0.35) {
          const target = ids[int(rand, ids.length)]!;
          const before = upstream.get(target)!;
          // An update may move the row to another key: it leaves one sum and joins another.
          const after = { ...upstreamRow(), ...(rand() < 0.7 ? { k: before.k } : {}) };
          upstream.set(target, after);
          event = { op: 'u', before: jsonRow(before), after: jsonRow(after) };
          changes.push({ row: before, op: '-U' }, { row: after, op: '+U' });
        } else if (ids.length > 5 && p < 0.45) {
          const target = ids[int(rand, ids.length)]!;
          const before = upstream.get(target)!;
          upstream.delete(target);
          event = { op: 'd', before: jsonRow(before), after: null };
          changes.push({ row: before, op: '-D' });
        } else {
          const after = upstreamRow();
          upstream.set(id++, after);
          event = { op: 'c', before: null, after: jsonRow(after) };
          changes.push({ row: after, op: '+I' });
        }
        const line = JSON.stringify({ schema: null, payload: event });
        // The offset of a checkpoint between an update's halves is {byte: line start, skip: 1}.
        engine.apply(model, changes[0]!);
        if (changes.length === 2) {
          expected.set(JSON.stringify({ byte: bytes, skip: 1 }), modelRows(model));
          engine.apply(model, changes[1]!);
        }
        bytes += Buffer.byteLength(line) + 1;
        expected.set(JSON.stringify(bytes), modelRows(model));
        lines.push(line);
      }
      // The CDC file is local whatever the table's backend (as a CDC tool's export would be).
      const dir = await mkdtemp(join(tmpdir(), 'tidemark-dv-cdc-'));
      onTestFinished(() => rm(dir, { recursive: true, force: true }));
      const file = join(dir, 'events.jsonl');
      await writeFile(file, lines.join('\n') + '\n');
      expect(await ingestAndCheck(t, new CdcJsonLinesSource(file, 'debezium-json'), 20, CDC_ROW_KIND_FIELD, expected)).toBeGreaterThan(5);
      expect(await rowsAt(t)).toEqual(modelRows(model));
    });

    it.skipIf(fixtures === null)(
      'the Java-written pk-dv table: tidemark compact, --full, then writes on it read like the model',
      async () => {
        const { warehouse, table: t } = await openFixtureCopy(
          backend,
          join(fixtures!, 'pk-dv', 'default.db/pk_table_scan_and_read_dv'),
          'pk-dv',
        );
        try {
          const key = (r: PkMorRow): string => `${r[0]}|${r[1]}|${r[2]}`;
          const model = new Map(PK_MOR_LATEST.map((r) => [key(r), r]));
          const rows = async (): Promise<PkMorRow[]> =>
            (await t.newRead().toArrowTable())
              .toArray()
              .map((r) => [r.f0, r.f1, r.f2, r.f3] as PkMorRow)
              .sort((a, b) => key(a).localeCompare(key(b)));
          const expected = (): PkMorRow[] => [...model.values()].sort((a, b) => key(a).localeCompare(key(b)));
          const compact = async (...extra: string[]): Promise<void> => {
            await cliCompact(t, ...extra);
            expect(await rows()).toEqual(expected());
          };
          // Java's level-0 rows of snapshots 5/6 show once compacted (pk-mor's latest rows).
          await compact();
          const upserts: PkMorRow[] = [
            ['Alice', 10, 1, 40.5],
            ['Lucy', 20, 1, 41.5],
            ['Nina', 20, 0, 42.5],
            ['Skye', 10, 0, 43.5],
          ];
          for (const r of upserts) model.set(key(r), r);
          const w = await t.append(upserts.map(([f0, f1, f2, f3]) => ({ f0, f1, f2, f3 })));
          expect(w.status).toBe('committed');
          expect(await rows()).toEqual(expected());
          const gone: PkMorRow = ['Bob', 10, 0, 12.1];
          model.delete(key(gone));
          expect((await t.delete([{ f0: 'Bob', f1: 10, f2: 0 }])).deleted).toBe(1);
          expect(await rows()).toEqual(expected());
          await compact('--full');
        } finally {
          await warehouse.cleanup();
        }
      },
    );

    it.each([
      [{ 'merge-engine': 'first-row' }, 'merge-engine'],
      [{ 'merge-engine': 'partial-update', 'changelog-producer': 'full-compaction' }, 'changelog-producer'],
    ])('refuses %o with deletion vectors, naming the option, and creates nothing', async (options, option) => {
      const name = `db.refused${++n}`;
      const err = await env.catalog
        .createTable(name, {
          fields: columns('k INT NOT NULL', 'v STRING'),
          primaryKeys: ['k'],
          options: { 'deletion-vectors.enabled': 'true', ...options },
        })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toContain(`'${option}'`);
      expect((err as Error).message).toContain("'deletion-vectors.enabled' = 'true'");
      await expect(env.catalog.tableExists(name)).resolves.toBe(false);
    });

    it('refuses to turn deletion vectors on for a first-row table, and its schema stays as it was', async () => {
      const name = `db.refused${++n}`;
      await env.catalog.createTable(name, {
        fields: columns('k INT NOT NULL', 'v STRING'),
        primaryKeys: ['k'],
        options: { 'merge-engine': 'first-row' },
      });
      const t = await openTable(env.catalog.tableLocation(name), { fileIO: env.wh.io });
      const r = await runMain(['alter', t.location, 'set-option', 'deletion-vectors.enabled=true']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("'merge-engine'");
      expect(r.stderr).toContain("'deletion-vectors.enabled' = 'true'");
      expect((await t.schemaManager.latest()).id).toBe(0);
    });
  });
});
