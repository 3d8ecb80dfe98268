/**
 * The bad-input corpus: every way of misusing `tidemark` found so far, run through the built
 * binary against one populated table. Each case asserts the exit code (1 failed, 2 bad usage), the
 * one-line message naming the file, line, column or option, no stack trace, and that the table is
 * exactly as before: same files (path, size and content hash, so snapshots, hints, manifests and
 * data files included) and no file left behind.
 *
 * Setting the table up and the follow-up checks of fixed inputs run the CLI in this process
 * (`main()`): there the process boundary is not what is tested, and at a load of 20 a process
 * start alone can take seconds. Every test's time budget scales with the commands it runs.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain, type MainResult } from './support/cli-main.js';
import { runTidemark } from './support/cli-process.js';
import { fileState } from './support/file-state.js';
import { columns } from './support/table-definitions.mjs';

/**
 * Hang guard of one binary run: a killed process fails its case. Generous, since on a loaded
 * machine (CI at load 20) a node start and a command can take tens of seconds; a real hang never
 * ends, so only the bound matters, not its size.
 */
const PROCESS_BUDGET_MS = 120_000;
/** Budget of one command run in this process (a few seconds alone; many times that under load). */
const COMMAND_BUDGET_MS = 30_000;
/** A test's timeout: its commands' budgets plus room for its own file checks. */
const budget = (commands: number, each = COMMAND_BUDGET_MS): number => commands * each + 30_000;
let dir: string;
let table: string;

/** Runs a command that must succeed, in this process. */
async function ok(args: string[], stdin?: string): Promise<MainResult> {
  const r = await runMain(args, { cwd: dir, ...(stdin !== undefined ? { stdin } : {}) });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r;
}

function file(name: string, content: string | Uint8Array, under = dir): string {
  const p = join(under, name);
  writeFileSync(p, content);
  return p;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tidemark-corpus-'));
  table = join(dir, 'wh', 'db.db', 't');
  const schema = JSON.stringify(columns('id BIGINT NOT NULL', 'p STRING', 'ts TIMESTAMP(3)', 'amount DECIMAL(5, 2)'));
  await ok(['create', table, '--schema', schema, '--partition', 'p']);
  await ok(['write', table], '{"id":1,"p":"a","ts":"2024-01-01 10:00:00.123","amount":"1.50"}\n{"id":2,"p":"b"}\n');
  await ok(['tag', 'create', table, 't1']);
  await ok(['write', table], '{"id":3,"p":null}\n{"id":4,"p":""}\n');
  await ok(['write', table], '{"id":5,"p":"a"}\n');
  await ok(['tag', 'create', table, 't3']);
}, budget(6));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Where one case runs: its own copy of the populated table, in its own scratch directory. */
interface CaseDirs {
  /** The scratch directory (the command's working directory); the table is `<dir>/wh/db.db/t`. */
  readonly dir: string;
  readonly table: string;
  /** Writes `content` to `<dir>/<name>` and returns the path. */
  file(name: string, content: string | Uint8Array): string;
}

interface Case {
  readonly name: string;
  /** Arguments, built on the case's own copy of the table. */
  readonly args: (c: CaseDirs) => string[];
  readonly stdin?: string;
  readonly code: 1 | 2;
  readonly message: RegExp;
}

const deep = (n: number): string => `${'('.repeat(n)}id = 1${')'.repeat(n)}`;

const cases: Case[] = [
  // write: values
  {
    name: 'wrong type',
    args: ({ table }) => ['write', table],
    stdin: '{"id":"abc"}\n',
    code: 1,
    message: /^tidemark write: input line 1, column 'id': expected BIGINT, got "abc"$/m,
  },
  {
    name: 'NULL in NOT NULL',
    args: ({ table }) => ['write', table],
    stdin: '{"id":1}\n{"id":null}\n',
    code: 1,
    message: /input line 2, column 'id'.*NULL/i,
  },
  {
    name: 'unknown column',
    args: ({ table }) => ['write', table],
    stdin: '{"id":1,"nope":2}\n',
    code: 1,
    message: /input line 1: unknown column 'nope'/,
  },
  { name: 'not JSON', args: ({ table }) => ['write', table], stdin: '{"id":1}\n{"id":\n', code: 1, message: /input line 2/ },
  {
    name: 'TIMESTAMP(3) with 9 fraction digits',
    args: ({ table }) => ['write', table],
    stdin: '{"id":1,"ts":"2024-01-01 10:00:00.123456789"}\n',
    code: 1,
    message: /input line 1, column 'ts': .*more than 3 fractional second digits/,
  },
  {
    name: 'DECIMAL with too many fraction digits',
    args: ({ table }) => ['write', table],
    stdin: '{"id":1,"amount":"1.234"}\n',
    code: 1,
    message: /input line 1, column 'amount'.*fractional digits/,
  },
  {
    name: 'DECIMAL out of range',
    args: ({ table }) => ['write', table],
    stdin: '{"id":1,"amount":"12345.00"}\n',
    code: 1,
    message: /input line 1, column 'amount'.*digits/,
  },
  {
    name: 'bad TIMESTAMP',
    args: ({ table }) => ['write', table],
    stdin: '{"id":1,"ts":"2024-02-30 00:00:00"}\n',
    code: 1,
    message: /input line 1, column 'ts'/,
  },
  {
    name: 'BIGINT out of range',
    args: ({ table }) => ['write', table],
    stdin: '{"id":9223372036854775808}\n',
    code: 1,
    message: /input line 1, column 'id'/,
  },
  {
    name: 'lone surrogate',
    args: ({ table }) => ['write', table],
    stdin: '{"id":1,"p":"x\\ud800"}\n',
    code: 1,
    message: /input line 1, column 'p': .*lone UTF-16 surrogate/,
  },
  {
    name: 'bytes that are not UTF-8',
    args: ({ table, file }) => [
      'write',
      table,
      '--input',
      file('latin1.jsonl', Buffer.from('{"id":1}\n{"id":2,"p":"caf\xe9"}\n', 'latin1')),
    ],
    code: 1,
    message: /input line 2: not valid UTF-8/,
  },
  {
    name: 'CSV not UTF-8',
    args: ({ table, file }) => [
      'write',
      table,
      '--format',
      'csv',
      '--input',
      file('latin1.csv', Buffer.from('id,p\n1,caf\xe9\n', 'latin1')),
    ],
    code: 1,
    message: /input line 2: not valid UTF-8/,
  },
  {
    name: 'CSV duplicate header',
    args: ({ table }) => ['write', table, '--format', 'csv'],
    stdin: 'id,id,p\n1,2,a\n',
    code: 1,
    message: /input line 1: header names column 'id' twice/,
  },
  {
    name: 'CSV unknown header',
    args: ({ table }) => ['write', table, '--format', 'csv'],
    stdin: 'id,q\n1,2\n',
    code: 1,
    message: /input line 1: header names unknown column 'q'/,
  },
  {
    name: 'CSV field count',
    args: ({ table }) => ['write', table, '--format', 'csv'],
    stdin: 'id,p\n1,a\n2\n',
    code: 1,
    message: /input line 3: 1 fields, but the header has 2/,
  },
  {
    name: 'CSV type error',
    args: ({ table }) => ['write', table, '--format', 'csv'],
    stdin: 'id,p\n1,a\nx,b\n',
    code: 1,
    message: /input line 3, column 'id'/,
  },
  // write: files and options
  {
    name: 'missing input file',
    args: ({ table, dir }) => ['write', table, '--input', join(dir, 'nope.jsonl')],
    code: 1,
    message: /input file .*nope\.jsonl does not exist/,
  },
  {
    name: 'directory as input file',
    args: ({ table, dir }) => ['write', table, '--input', dir],
    code: 1,
    message: /input file .* is a directory/,
  },
  {
    name: 'parquet from stdin',
    args: ({ table }) => ['write', table, '--format', 'parquet'],
    code: 2,
    message: /'--format parquet' needs '--input <file>'/,
  },
  {
    name: 'not a Parquet file',
    args: ({ table, file }) => ['write', table, '--format', 'parquet', '--input', file('x.parquet', 'not parquet at all')],
    code: 1,
    message: /x\.parquet/,
  },
  {
    name: '--partition without --overwrite',
    args: ({ table }) => ['write', table, '--partition', 'p=a'],
    stdin: '',
    code: 2,
    message: /--partition/,
  },
  {
    name: '--commit-identifier without --commit-user',
    args: ({ table }) => ['write', table, '--commit-identifier', '3'],
    stdin: '',
    code: 2,
    message: /--commit-user/,
  },
  {
    name: 'overwrite with rows outside the partition',
    args: ({ table }) => ['write', table, '--overwrite', '--partition', 'p=a'],
    stdin: '{"id":9,"p":"b"}\n',
    code: 1,
    message: /trying to overwrite partition \{"p":"a"\}, but new file .* belongs to partition 'p=b'/,
  },
  {
    name: 'overwrite of a non-partition column',
    args: ({ table }) => ['write', table, '--overwrite', '--partition', 'id=1'],
    stdin: '{"id":1,"p":"a"}\n',
    code: 1,
    message: /'id', which is not a partition key/,
  },
  { name: 'empty table location', args: () => ['write', ''], stdin: '{"id":1}\n', code: 2, message: /the table location is empty/ },
  { name: 'no table there', args: ({ dir }) => ['write', join(dir, 'wh', 'db.db', 'none')], stdin: '{"id":1}\n', code: 1, message: /none/ },
  // read
  { name: 'missing snapshot', args: ({ table }) => ['read', table, '--snapshot', '99'], code: 1, message: /snapshot 99/ },
  { name: 'missing tag', args: ({ table }) => ['read', table, '--tag', 'nope'], code: 1, message: /tag 'nope'/ },
  {
    name: 'timestamp before the first snapshot',
    args: ({ table }) => ['read', table, '--timestamp', '1970-01-02T00:00:00Z'],
    code: 1,
    message: /1970-01-02/,
  },
  { name: 'unknown column in --columns', args: ({ table }) => ['read', table, '--columns', 'id,nope'], code: 1, message: /'nope'/ },
  { name: 'bad predicate', args: ({ table }) => ['read', table, '--where', 'id = '], code: 1, message: /predicate/ },
  { name: 'predicate on an unknown column', args: ({ table }) => ['read', table, '--where', "q = 'a'"], code: 1, message: /'q'/ },
  {
    name: '5,000 nested parentheses',
    args: ({ table }) => ['read', table, '--where', deep(5000)],
    code: 1,
    message: /nests parentheses or NOT more than 100 levels deep/,
  },
  { name: 'unknown format', args: ({ table }) => ['read', table, '--format', 'xml'], code: 2, message: /xml/ },
  {
    name: 'conflicting time travel',
    args: ({ table }) => ['read', table, '--snapshot', '1', '--tag', 't1'],
    code: 2,
    message: /--snapshot|--tag/,
  },
  // other commands
  { name: 'unknown command', args: ({ table }) => ['wirte', table], code: 2, message: /unknown command 'wirte' \(did you mean write\?\)/ },
  { name: 'unknown option', args: ({ table }) => ['read', table, '--frmat', 'csv'], code: 2, message: /--frmat/ },
  {
    name: 'create an existing table',
    args: ({ table }) => ['create', table, '--schema', '[{"name":"id","type":"INT"}]'],
    code: 1,
    message: /already exists/,
  },
  {
    name: "create ''",
    args: () => ['create', '', '--schema', '[{"name":"id","type":"INT"}]'],
    code: 2,
    message: /the table location is empty/,
  },
  {
    name: 'create a database directory holding tables',
    args: ({ dir }) => ['create', join(dir, 'wh', 'db.db'), '--schema', '[{"name":"id","type":"INT"}]'],
    code: 1,
    message: /already holds table .*db\.db\/t/,
  },
  {
    name: 'create inside a table',
    args: ({ table }) => ['create', join(table, 'sub'), '--schema', '[{"name":"id","type":"INT"}]'],
    code: 1,
    message: /it is inside table .*db\.db\/t/,
  },
  {
    name: 'create with a bad type',
    args: ({ dir }) => ['create', join(dir, 'wh', 'db.db', 'bad'), '--schema', '[{"name":"id","type":"INTEGR"}]'],
    code: 1,
    message: /column 'id': cannot parse type 'INTEGR'/,
  },
  { name: 'tag that exists', args: ({ table }) => ['tag', 'create', table, 't1'], code: 1, message: /tag 't1' already exists/ },
  { name: 'delete a missing tag', args: ({ table }) => ['tag', 'delete', table, 'nope'], code: 1, message: /nope/ },
  { name: 'rollback behind a tag', args: ({ table }) => ['rollback', table, '--to', '1'], code: 1, message: /t3/ },
  {
    name: 'alter-type dropping NOT NULL silently',
    args: ({ table }) => ['alter', table, 'alter-type', 'id', 'BIGINT'],
    code: 1,
    message: /the column is NOT NULL.*'BIGINT NOT NULL' to keep.*'BIGINT NULL' to allow NULLs/,
  },
  {
    name: 'alter-type without a Paimon cast rule',
    args: ({ table }) => ['alter', table, 'alter-type', 'amount', 'TIMESTAMP(3)'],
    code: 1,
    message: /column 'amount' from DECIMAL\(5, 2\) to TIMESTAMP\(3\): Paimon has no cast rule/,
  },
  { name: 'drop a partition column', args: ({ table }) => ['alter', table, 'drop-column', 'p'], code: 1, message: /'p'/ },
  {
    name: 'retain-min above retain-max',
    args: ({ table }) => ['expire-snapshots', table, '--retain-min', '5', '--retain-max', '2'],
    code: 2,
    message: /--retain-min/,
  },
  {
    name: 'ingest with a bad value',
    args: ({ table, dir, file }) => [
      'ingest',
      table,
      '--source',
      file('bad-ingest.jsonl', '{"id":7,"p":"a"}\n{"id":"x","p":"a"}\n'),
      '--state',
      join(dir, 'state-bad'),
    ],
    code: 1,
    message: /bad-ingest\.jsonl line 2, column 'id': expected BIGINT, got "x"/,
  },
  {
    name: 'ingest of a missing source',
    args: ({ table, dir }) => ['ingest', table, '--source', join(dir, 'none.jsonl'), '--state', join(dir, 'state-none')],
    code: 1,
    message: /none\.jsonl: no such file/,
  },
  {
    name: 'ingest of a directory',
    args: ({ table, dir }) => ['ingest', table, '--source', dir, '--state', join(dir, 'state-dir')],
    code: 1,
    message: /is a directory/,
  },
  {
    name: 'ingest of a line that is not JSON',
    args: ({ table, dir, file }) => [
      'ingest',
      table,
      '--source',
      file('notjson.jsonl', '{"id":7}\n{"id":\n'),
      '--state',
      join(dir, 'state-nj'),
    ],
    code: 1,
    message: /notjson\.jsonl line 2 \(byte 9\): not valid JSON/,
  },
];

// Every case runs on its own copy of the populated table, so the cases run concurrently: a case's
// "table unchanged" check sees only what its own command did.
describe.concurrent('bad input: clear error, right exit code, table unchanged', () => {
  for (const [i, c] of cases.entries()) {
    it(
      c.name,
      async () => {
        const caseDir = join(dir, 'cases', String(i));
        cpSync(join(dir, 'wh'), join(caseDir, 'wh'), { recursive: true });
        const caseTable = join(caseDir, 'wh', 'db.db', 't');
        const dirs: CaseDirs = { dir: caseDir, table: caseTable, file: (name, content) => file(name, content, caseDir) };
        const before = fileState(caseTable);
        expect(before).toEqual(fileState(table)); // the copy is the populated table, file for file
        const r = await runTidemark(c.args(dirs), {
          cwd: caseDir,
          timeoutMs: PROCESS_BUDGET_MS,
          ...(c.stdin !== undefined ? { stdin: c.stdin } : {}),
        });
        expect(r.timedOut).toBe(false);
        expect(r.stderr).toMatch(c.message);
        expect(r.code).toBe(c.code);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(r.stderr).not.toMatch(/unexpected error:/);
        expect(fileState(caseTable)).toEqual(before);
      },
      // One binary run; cases running side by side each take longer than alone: a hang guard, not a speed check.
      budget(1, PROCESS_BUDGET_MS),
    );
  }
});

describe('inputs that used to go wrong now do what the docs say', () => {
  it('a UTF-8 byte order mark is skipped (jsonl and csv)', { timeout: budget(4) }, async () => {
    const t = join(dir, 'wh', 'db.db', 'bom');
    await ok(['create', t, '--schema', '[{"name":"id","type":"INT"},{"name":"s","type":"STRING"}]']);
    await ok(['write', t, '--input', file('bom.jsonl', '\ufeff{"id":1,"s":"é"}\n')]);
    await ok(['write', t, '--format', 'csv', '--input', file('bom.csv', '\ufeffid,s\n2,ü\n')]);
    const r = await ok(['read', t]);
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual(['{"id":1,"s":"é"}', '{"id":2,"s":"ü"}']);
  });

  it('overwriting the default partition replaces NULL only, not blank or look-alike values', { timeout: budget(4) }, async () => {
    const t = join(dir, 'wh', 'db.db', 'dflt');
    await ok(['create', t, '--schema', '[{"name":"id","type":"INT"},{"name":"p","type":"STRING"}]', '--partition', 'p']);
    const rows = [null, '', ' ', '\t', '__DEFAULT_PARTITION__', 'x'].map((p, i) => JSON.stringify({ id: i, p }));
    await ok(['write', t], rows.join('\n') + '\n');
    await ok(['write', t, '--overwrite', '--partition', 'p=__DEFAULT_PARTITION__'], '{"id":10,"p":null}\n');
    const r = await ok(['read', t]);
    const got = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: number; p: string | null });
    expect(got.sort((a, b) => a.id - b.id)).toEqual([
      { id: 1, p: '' },
      { id: 2, p: ' ' },
      { id: 3, p: '\t' },
      { id: 4, p: '__DEFAULT_PARTITION__' },
      { id: 5, p: 'x' },
      { id: 10, p: null },
    ]);
  });

  it('--partition values are given as in directory names (a%2Fb is a/b)', { timeout: budget(4) }, async () => {
    const t = join(dir, 'wh', 'db.db', 'esc');
    await ok(['create', t, '--schema', '[{"name":"id","type":"INT"},{"name":"p","type":"STRING"}]', '--partition', 'p']);
    await ok(['write', t], '{"id":1,"p":"a/b"}\n{"id":2,"p":"c"}\n');
    await ok(['write', t, '--overwrite', '--partition', 'p=a%2Fb'], '{"id":3,"p":"a/b"}\n');
    const r = await ok(['read', t]);
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual(['{"id":2,"p":"c"}', '{"id":3,"p":"a/b"}']);
  });

  it('alter-type keeps or drops NOT NULL only when told', { timeout: budget(5) }, async () => {
    const t = join(dir, 'wh', 'db.db', 'nn');
    await ok(['create', t, '--schema', '[{"name":"id","type":"INT NOT NULL"}]']);
    await ok(['alter', t, 'alter-type', 'id', 'BIGINT', 'NOT', 'NULL']);
    const refused = await runMain(['write', t], { cwd: dir, stdin: '{"id":null}\n' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/input line 1, column 'id'/);
    await ok(['alter', t, 'alter-type', 'id', 'BIGINT', 'NULL']);
    await ok(['write', t], '{"id":null}\n');
  });

  it('expire-snapshots --dry-run reports the earliest snapshot the real run leaves', { timeout: budget(8) }, async () => {
    const t = join(dir, 'wh', 'db.db', 'exp');
    await ok(['create', t, '--schema', '[{"name":"id","type":"INT"}]']);
    for (let i = 0; i < 5; i++) await ok(['write', t], `{"id":${i}}\n`);
    const dry = await ok(['expire-snapshots', t, '--retain-min', '1', '--retain-max', '2', '--dry-run', '--json']);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, earliestSnapshotId: 4 });
    const real = await ok(['expire-snapshots', t, '--retain-min', '1', '--retain-max', '2', '--json']);
    expect(JSON.parse(real.stdout)).toMatchObject({ dryRun: false, earliestSnapshotId: 4 });
  });

  it('a directory for a new table in a fresh database is fine', { timeout: budget(1) }, async () => {
    mkdirSync(join(dir, 'wh2'), { recursive: true });
    await ok(['create', join(dir, 'wh2', 'x.db', 't'), '--schema', '[{"name":"id","type":"INT"}]']);
  });
});
