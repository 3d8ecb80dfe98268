/**
 * Property test of primary-key writes: random sequences of upserts, retractions and deletes,
 * committed as several snapshots, against an independent in-memory model of each merge engine.
 * Every snapshot is read back by time travel and compared with the model's state at that point.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, type RowObject, type Table, type TableSpec } from '../src/index.js';
import { mergeEngineOptions } from '../src/read/merge-engine.js';
import { readMergeSplit } from '../src/read/split-readers.js';
import { trimmedKeyFields } from '../src/write/key-value/key-value.js';
import { seededRandom } from './helpers.js';

type Row = Record<string, unknown>;
type Op = { kind: string; row: Row };

/** One merge engine configuration: table spec, op generator and model. */
interface Scenario {
  readonly name: string;
  readonly spec: TableSpec;
  /** Next op for key `k`, given the model state of `k` (undefined = absent); null = skip. */
  op(rand: (n: number) => number, k: number, state: Row | undefined, deletedInCommit: boolean): Op | null;
  /** Applies an op to the model. */
  apply(model: Map<number, Row>, op: Op): void;
  /** Reads that skip level 0 (first-row) are checked through a merge of all files instead. */
  readonly allLevels?: boolean;
  /** Also delete with `Table.delete` (engines where -D removes the row). */
  readonly tableDelete?: boolean;
  /** A commit ended with its writer's compaction of level 0 (deletion vectors): what the model forgets. */
  compacted?(): void;
}

const maybe = <T>(rand: (n: number) => number, v: T): T | null => (rand(4) === 0 ? null : v);

const dedupSpec = (options: Record<string, string>): TableSpec => ({
  fields: [
    { name: 'k', type: 'INT NOT NULL' },
    { name: 'v', type: 'STRING' },
    { name: 'ts', type: 'BIGINT' },
  ],
  primaryKeys: ['k'],
  options: { bucket: '2', 'write-buffer-size': '2 kb', ...options },
});

/**
 * Deduplicate with sequence.field: the record with the highest ts wins (ties: the later one); -D
 * too. Compaction into the top level drops a winning -D, after which a later record with a smaller
 * ts is visible again (Java Paimon does the same, apache/paimon #5387). Without deletion vectors
 * the model keeps every -D forever, so the table is `write-only` (compact-sequence-field.test.ts
 * covers compaction). With deletion vectors every commit ends with its writer's compaction, which
 * takes level 0 up and drops retractions: the model then forgets the deletes that won, and no key
 * is written again in the commit that deleted it (a compaction within the commit may drop it).
 */
function sequenceFieldScenario(dv: boolean): Scenario {
  const history = new Map<number, Array<{ ts: bigint | null; kind: string; row: Row }>>();
  const best = (h: ReadonlyArray<{ ts: bigint | null; kind: string; row: Row }>) => {
    let b = h[0]!;
    for (const x of h) if (b.ts === null || (x.ts !== null && x.ts >= b.ts)) b = x;
    return b;
  };
  return {
    name: 'deduplicate with sequence.field',
    tableDelete: true,
    spec: dedupSpec(dv ? { 'sequence.field': 'ts' } : { 'sequence.field': 'ts', 'write-only': 'true' }),
    op(rand, k, state, deletedInCommit) {
      if (dv && deletedInCommit) return null;
      const ts = maybe(rand, BigInt(rand(20)));
      if (state && rand(6) === 0) return { kind: '-D', row: { ...state, ts } };
      return { kind: '+I', row: { k, v: `v${rand(1000)}`, ts } };
    },
    apply(model, op) {
      const k = op.row.k as number;
      const h = history.get(k) ?? [];
      h.push({ ts: op.row.ts as bigint | null, kind: op.kind, row: op.row });
      history.set(k, h);
      const b = best(h);
      if (b.kind === '-D') model.delete(k);
      else model.set(k, b.row);
    },
    ...(dv
      ? {
          compacted() {
            for (const [k, h] of history) {
              const b = best(h);
              if (b.kind === '-D') history.delete(k);
              else history.set(k, [b]);
            }
          },
        }
      : {}),
  };
}

/** Fresh scenarios (their models keep state) for each bucket mode. */
const makeScenarios = (dv: boolean): Scenario[] => [
  {
    name: 'deduplicate',
    tableDelete: true,
    spec: dedupSpec({}),
    op(rand, k, state) {
      const r = rand(10);
      if (state && r === 0) return { kind: '-D', row: { ...state } };
      if (state && r === 1) return { kind: '-U', row: { ...state } };
      return { kind: rand(2) ? '+I' : '+U', row: { k, v: `v${rand(1000)}`, ts: BigInt(rand(100)) } };
    },
    apply(model, op) {
      if (op.kind === '-D' || op.kind === '-U') model.delete(op.row.k as number);
      else model.set(op.row.k as number, op.row);
    },
  },
  sequenceFieldScenario(dv),
  {
    name: 'partial-update with remove-record-on-delete',
    tableDelete: true,
    spec: {
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'a', type: 'STRING' },
        { name: 'b', type: 'BIGINT' },
      ],
      primaryKeys: ['k'],
      options: {
        bucket: '2',
        'merge-engine': 'partial-update',
        'partial-update.remove-record-on-delete': 'true',
        'write-buffer-size': '2 kb',
      },
    },
    op(rand, k, state, deletedInCommit) {
      if (state && rand(6) === 0) return { kind: '-D', row: { ...state } };
      // The write buffer merges a delete with a later insert of the same commit, as Java's does:
      // the model keeps them in separate commits.
      if (deletedInCommit) return null;
      return { kind: '+I', row: { k, a: maybe(rand, `a${rand(100)}`), b: maybe(rand, BigInt(rand(100))) } };
    },
    apply(model, op) {
      const k = op.row.k as number;
      if (op.kind === '-D') return void model.delete(k);
      const cur = model.get(k) ?? { k, a: null, b: null };
      model.set(k, { k, a: op.row.a ?? cur.a, b: op.row.b ?? cur.b });
    },
  },
  {
    name: 'partial-update with a sequence group',
    spec: {
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'a', type: 'STRING' },
        { name: 'g', type: 'BIGINT' },
        { name: 'b', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '2', 'merge-engine': 'partial-update', 'fields.g.sequence-group': 'a', 'write-buffer-size': '2 kb' },
    },
    op(rand, k, state) {
      // A key's first record carries a group sequence: a key with a single record is read unmerged
      // (Java's ReducerMergeFunctionWrapper), which would show a group value written without one.
      const g = state === undefined ? BigInt(rand(10)) : maybe(rand, BigInt(rand(10)));
      return { kind: '+I', row: { k, a: maybe(rand, `a${rand(100)}`), g, b: maybe(rand, `b${rand(100)}`) } };
    },
    apply(model, op) {
      const r = op.row;
      const cur = model.get(r.k as number) ?? { k: r.k, a: null, g: null, b: null };
      const next = { ...cur };
      // The group (a, g) takes the record's values, nulls included, when its g is not older.
      if (r.g !== null && (cur.g === null || (r.g as bigint) >= (cur.g as bigint))) {
        next.a = r.a;
        next.g = r.g;
      }
      if (r.b !== null) next.b = r.b;
      model.set(r.k as number, next);
    },
  },
  {
    name: 'aggregation (sum, max, last_non_null_value) with retractions and remove-record-on-delete',
    tableDelete: true,
    spec: {
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'n', type: 'BIGINT' },
        { name: 'm', type: 'INT' },
        { name: 's', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: {
        bucket: '3',
        'merge-engine': 'aggregation',
        'fields.n.aggregate-function': 'sum',
        'fields.m.aggregate-function': 'max',
        'fields.m.ignore-retract': 'true',
        'fields.s.ignore-retract': 'true',
        'aggregation.remove-record-on-delete': 'true',
        'write-buffer-size': '2 kb',
      },
    },
    op(rand, k, state, deletedInCommit) {
      if (deletedInCommit) return null;
      if (state && rand(8) === 0) return { kind: '-D', row: { k, n: null, m: null, s: null } };
      if (state && rand(4) === 0) return { kind: '-U', row: { k, n: maybe(rand, BigInt(rand(50))), m: rand(100), s: 'ignored' } };
      return { kind: '+I', row: { k, n: maybe(rand, BigInt(rand(50))), m: maybe(rand, rand(100)), s: maybe(rand, `s${rand(100)}`) } };
    },
    apply(model, op) {
      const r = op.row;
      const k = r.k as number;
      if (op.kind === '-D') return void model.delete(k);
      const cur = model.get(k) ?? { k, n: null, m: null, s: null };
      if (op.kind === '-U') {
        if (r.n !== null) cur.n = cur.n === null ? -(r.n as bigint) : (cur.n as bigint) - (r.n as bigint);
        model.set(k, { ...cur });
        return;
      }
      const n = r.n === null ? cur.n : cur.n === null ? r.n : (cur.n as bigint) + (r.n as bigint);
      const m = r.m === null ? cur.m : cur.m === null ? r.m : Math.max(cur.m as number, r.m as number);
      model.set(k, { k, n, m, s: r.s ?? cur.s });
    },
  },
  {
    name: 'first-row (ignore-delete)',
    allLevels: true,
    spec: {
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '2', 'merge-engine': 'first-row', 'ignore-delete': 'true', 'write-buffer-size': '2 kb' },
    },
    op(rand, k, state) {
      if (state && rand(5) === 0) return { kind: '-D', row: { ...state } };
      return { kind: '+I', row: { k, v: `v${rand(1000)}` } };
    },
    apply(model, op) {
      if (op.kind === '+I' && !model.has(op.row.k as number)) model.set(op.row.k as number, op.row);
    },
  },
];

let tableCounter = 0;
async function createTable(spec: TableSpec): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://pk-property-${process.pid}-${++tableCounter}/wh`, { fileIO: io });
  await catalog.createTable('db.t', spec);
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

function sorted(rows: Row[]): Row[] {
  return rows.map((r) => ({ ...r })).sort((a, b) => (a.k as number) - (b.k as number));
}

async function readSnapshot(table: Table, snapshotId: number, allLevels: boolean): Promise<Row[]> {
  if (!allLevels) return (await table.newRead({ snapshotId }).toArrowTable()).toArray().map((r) => r.toJSON() as Row);
  // first-row reads skip level 0 (Java does too); merge every level to check what was written.
  const schema = table.schema();
  const plan = await table.newRead({ snapshotId }).plan();
  const ctx = { fileIO: table.fileIO, schemaOf: async () => schema, readFields: schema.fields };
  const out: Row[] = [];
  for (const split of plan.splits) {
    for await (const b of readMergeSplit(ctx, split, trimmedKeyFields(schema), mergeEngineOptions(schema), false)) {
      for (let i = 0; i < b.numRows; i++) out.push(b.get(i)!.toJSON() as Row);
    }
  }
  return out;
}

/** Dynamic buckets (`bucket` = -1) with buckets of 5 keys, so that keys spread over several buckets. */
const dynamic = (spec: TableSpec): TableSpec => ({
  ...spec,
  options: { ...spec.options, bucket: '-1', 'dynamic-bucket.target-row-num': '5' },
});

/**
 * Deletion vectors: batch reads skip level 0, so only the snapshot a commit ends with (its
 * writer's COMPACT) reads like the model; every merge engine runs but first-row (refused with
 * deletion vectors), sequence.field on a table that compacts. Under partial-update, aggregation and
 * sequence.field the writer's lookup compaction must merge a key's new records with its older row,
 * which it marks deleted (dv-merge-engines.test.ts pins the smallest cases).
 */
const withDeletionVectors = (spec: TableSpec): TableSpec => ({ ...spec, options: { ...spec.options, 'deletion-vectors.enabled': 'true' } });

describe.each([
  { mode: 'fixed buckets', toSpec: (s: TableSpec) => s, dv: false },
  { mode: 'dynamic buckets', toSpec: dynamic, dv: false },
  { mode: 'deletion vectors', toSpec: withDeletionVectors, dv: true },
  { mode: 'deletion vectors, dynamic buckets', toSpec: (s: TableSpec) => withDeletionVectors(dynamic(s)), dv: true },
])('primary-key writes against an in-memory model ($mode, every snapshot)', ({ toSpec, dv }) => {
  for (const scenario of makeScenarios(dv)) {
    const engine = scenario.spec.options?.['merge-engine'] ?? 'deduplicate';
    if (dv && (scenario.spec.options?.['write-only'] === 'true' || engine === 'first-row')) continue;
    it(scenario.name, async () => {
      const rand = seededRandom(7 + scenario.name.length);
      const table = await createTable(toSpec(scenario.spec));
      const model = new Map<number, Row>();
      /** The rows each snapshot reads (null: not checked, a deletion-vector table's APPEND snapshot). */
      const expected: (Row[] | null)[] = [];
      const expect_ = (ids: readonly number[]): void => {
        ids.forEach((_, i) => expected.push(dv && i < ids.length - 1 ? null : sorted([...model.values()])));
      };
      const commits = 7;
      for (let c = 0; c < commits; c++) {
        const ops: Op[] = [];
        const deleted = new Set<number>();
        const count = 20 + rand(40);
        for (let i = 0; i < count; i++) {
          const k = rand(24);
          const op = scenario.op(rand, k, model.get(k), deleted.has(k));
          if (op === null) continue;
          if (op.kind === '-D') deleted.add(k);
          scenario.apply(model, op);
          ops.push(op);
        }
        const input: RowObject[] = ops.map((o) => ({ ...o.row, op: o.kind }));
        const result = await table.append(input, { rowKindField: 'op' });
        expect(result.status).toBe('committed');
        // A writer's compaction adds a COMPACT snapshot that must read like the APPEND before it.
        if (result.status === 'committed') expect_(result.snapshotIds);
        if (dv) scenario.compacted?.();
        // Table.delete as its own commit now and then (not for first-row, which ignores deletes).
        if (scenario.tableDelete && c % 3 === 1) {
          const present = [...model.keys()].slice(0, 3);
          const { deleted: n, result: r } = await table.delete([...present.map((k) => ({ k })), { k: 1000 + c }]);
          expect(n).toBe(present.length);
          if (present.length > 0) {
            expect(r.status).toBe('committed');
            for (const k of present) scenario.apply(model, { kind: '-D', row: { ...model.get(k)! } });
            if (r.status === 'committed') expect_(r.snapshotIds);
            if (dv) scenario.compacted?.();
          }
        }
      }
      const latest = await table.snapshotManager.latestId();
      expect(latest).toBe(expected.length);
      for (let id = 1; id <= expected.length; id++) {
        if (expected[id - 1] === null) continue;
        expect(sorted(await readSnapshot(table, id, scenario.allLevels ?? false)), `snapshot ${id}`).toEqual(expected[id - 1]);
      }
      expect(expected[expected.length - 1]!.length).toBeGreaterThan(3);
    });
  }
});
