/**
 * Messages a user read wrong or could not act on: what `inspect` calls rows, buckets and
 * compaction candidates, a double-quoted string in `--where`, the rollback and `maintain --dry-run`
 * wording, a stale `--commit-identifier`, a TIMESTAMP with `+00:00`, Parquet input that is a device
 * or damaged, and a mistyped flag. Run in this process through `main()`, except the damaged Parquet
 * file, which is read by the built binary so a decoder that loops would be killed, not hang the run.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain } from './support/cli-main.js';
import { runTidemark } from './support/cli-process.js';

const dir = mkdtempSync(join(tmpdir(), 'tidemark-messages-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function ok(argv: string[], stdin?: string): Promise<string> {
  const r = await runMain(argv, { cwd: dir, ...(stdin !== undefined ? { stdin } : {}) });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

async function failing(argv: string[], code: 1 | 2, stdin?: string): Promise<string> {
  const r = await runMain(argv, { cwd: dir, ...(stdin !== undefined ? { stdin } : {}) });
  expect(r.code).toBe(code);
  return r.stderr;
}

const jsonl = (rows: object[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const append = join(dir, 'append');
const pk = join(dir, 'pk');
const dv = join(dir, 'dv');

beforeAll(async () => {
  await ok([
    'create',
    append,
    '--schema',
    '[{"name":"id","type":"INT"},{"name":"p","type":"STRING"},{"name":"status","type":"STRING"}]',
    '--partition',
    'p',
  ]);
  for (let i = 0; i < 3; i++)
    await ok(
      ['write', append],
      jsonl([
        { id: i, p: 'a', status: 'paid' },
        { id: 10 + i, p: 'b', status: 'open' },
      ]),
    );
  await ok(['write', append], jsonl([{ id: 99, p: 'c', status: 'paid' }]));
  await ok([
    'create',
    pk,
    '--schema',
    '[{"name":"id","type":"INT"},{"name":"v","type":"STRING"}]',
    '--primary-key',
    'id',
    '--option',
    'bucket=1',
  ]);
  for (let i = 0; i < 3; i++)
    await ok(
      ['write', pk],
      jsonl([
        { id: 1, v: `x${i}` },
        { id: 2, v: `y${i}` },
      ]),
    );
  await ok(['delete', pk, '--where', 'id = 2']);
  await ok(['create', dv, '--schema', '[{"name":"id","type":"INT"}]', '--option', 'deletion-vectors.enabled=true']);
  await ok(['write', dv], jsonl(Array.from({ length: 10 }, (_, id) => ({ id }))));
  await ok(['delete', dv, '--where', 'id < 4']);
}, 13 * 30_000); // thirteen commands, each given 30 s on a loaded machine

describe('inspect', () => {
  it('a primary-key table holds records before merging, not rows', async () => {
    const text = await ok(['inspect', pk]);
    expect(text).toMatch(/live data +\d+ files · [\d.]+ \S+ · 7 records before merging by key · 1 partition · 1 bucket\n/);
    expect((await ok(['count', pk])).trim()).toBe('1');
  });

  it('rows deleted by vectors are not counted as rows', async () => {
    expect((await ok(['count', dv])).trim()).toBe('6');
    expect(await ok(['inspect', dv])).toMatch(/ · 6 rows \(\+4 deleted by vectors\) · /);
    const report = JSON.parse(await ok(['inspect', dv, '--json'])) as { liveFiles: { rows: number; deletedRows: number } };
    expect(report.liveFiles).toMatchObject({ rows: 10, deletedRows: 4 });
  });

  it('an append table without buckets is "unbucketed", not one bucket per partition', async () => {
    const text = await ok(['inspect', append]);
    expect(text).toMatch(/ · 7 rows · 3 partitions · unbucketed\n/);
    expect(text).not.toMatch(/\d buckets/);
  });

  it('says why small files are not merged yet, and never prints "1 files"', async () => {
    const text = await ok(['inspect', append]);
    expect(text).toMatch(/compaction +nothing to merge: no bucket holds compaction\.min\.file-num \(5\) small files yet\n/);
    const html = join(dir, 'report.html');
    const r = await runMain(['inspect', append, '--html', html], { cwd: dir });
    expect(r.code).toBe(0);
    const page = readFileSync(html, 'utf8');
    expect(page).not.toMatch(/\b1 files\b/);
    expect(page).not.toMatch(/compaction candidates/);
    expect(page).toContain('nothing to merge: no bucket holds compaction.min.file-num (5) small files yet');
    expect(page).toMatch(/p=c: 1 file, 1 small/);
  });
});

describe('other messages', () => {
  it('a double-quoted string in --where hints at single quotes', async () => {
    const err = await failing(['read', append, '--where', 'status = "paid"'], 1);
    expect(err).toBe(
      `tidemark read: unknown column 'paid' at position 10 in predicate ("paid" in double quotes names a column; ` +
        `a string takes single quotes: 'paid'); columns are: id, p, status\n`,
    );
  });

  it('rollback behind a tag names the --force flag', async () => {
    await ok(['tag', 'create', append, 'keep']);
    const err = await failing(['rollback', append, '--to', '1'], 1);
    expect(err).toMatch(/point at later snapshots; delete them, or pass --force \(force: true in code\), which deletes them too\n$/);
    await ok(['tag', 'delete', append, 'keep']);
  });

  it('maintain --dry-run says what would happen, not what did', async () => {
    const out = await ok(['maintain', append, '--dry-run']);
    const last = out.trim().split('\n').pop()!;
    expect(last).toMatch(
      /^dry run over 1 table\(s\), 0 failed: 0 snapshot\(s\) would expire, 0 file\(s\) would be deleted, 0 B would be freed; nothing was changed$/,
    );
  });

  it('a commit identifier below the last one committed says so', async () => {
    const t = join(dir, 'ids');
    await ok(['create', t, '--schema', '[{"name":"id","type":"INT"}]']);
    await ok(['write', t, '--commit-user', 'job', '--commit-identifier', '7'], '{"id":1}\n');
    expect(await ok(['write', t, '--commit-user', 'job', '--commit-identifier', '7'], '{"id":1}\n')).toBe(
      "skipped: commit identifier 7 of commit user 'job' was already committed\n",
    );
    expect(await ok(['write', t, '--commit-user', 'job', '--commit-identifier', '6'], '{"id":1}\n')).toBe(
      "skipped: commit identifier 6 of commit user 'job' is below 7, the last identifier it committed: identifiers of a commit " +
        'user must increase, and every one up to the last counts as committed (as in Paimon)\n',
    );
  });

  it('a TIMESTAMP takes +00:00 as it takes Z, and refuses another offset', async () => {
    const t = join(dir, 'ts');
    await ok(['create', t, '--schema', '[{"name":"t","type":"TIMESTAMP(3)"}]']);
    await ok(['write', t], jsonl([{ t: '2024-01-01T10:00:00Z' }, { t: '2024-01-01T11:00:00+00:00' }, { t: '2024-01-01 12:00:00-0000' }]));
    expect((await ok(['read', t])).split('\n').filter(Boolean).sort()).toEqual([
      '{"t":"2024-01-01T10:00:00.000"}',
      '{"t":"2024-01-01T11:00:00.000"}',
      '{"t":"2024-01-01T12:00:00.000"}',
    ]);
    expect(await failing(['write', t], 1, jsonl([{ t: '2024-01-01T10:00:00+01:00' }]))).toBe(
      "tidemark write: input line 1, column 't': expected TIMESTAMP(3) (a TIMESTAMP without time zone takes no UTC offset other than Z or +00:00), " +
        'got "2024-01-01T10:00:00+01:00"\n',
    );
  });

  it('Parquet input from a device or an empty file is named as such', async () => {
    expect(await failing(['write', append, '--format', 'parquet', '--input', '/dev/null'], 1)).toBe(
      "tidemark write: input file /dev/null is not a regular file: '--format parquet' reads a file by byte ranges\n",
    );
    const empty = join(dir, 'empty.parquet');
    writeFileSync(empty, '');
    expect(await failing(['write', append, '--format', 'parquet', '--input', empty], 1)).toBe(
      `tidemark write: input file ${empty} is empty, not a Parquet file\n`,
    );
  });

  it('a mistyped flag prints one line, the synopsis and where the options are, not the whole help', async () => {
    const err = await failing(['read', append, '--limt', '3'], 2);
    const lines = err.trimEnd().split('\n');
    expect(lines[0]).toBe("tidemark read: unknown option '--limt' (did you mean '--limit'?)");
    expect(lines[1]).toMatch(/^Usage: tidemark read <table> /);
    expect(lines[lines.length - 1]).toBe("Run 'tidemark read --help' for every option.");
    expect(lines.length).toBeLessThanOrEqual(5);
    expect(err).not.toContain('Options:');
  });
});

describe('damaged Parquet input', () => {
  /** A data file of the append table with byte `offset` of its Thrift footer changed by `delta`. */
  function damaged(name: string, offset: number, delta: number): string {
    const partition = join(append, 'p=a', 'bucket-0');
    const source = readFileSync(
      join(
        partition,
        readdirSync(partition).find((f) => f.endsWith('.parquet'))!,
      ),
    );
    const footerStart = source.length - 8 - source.readUInt32LE(source.length - 8);
    const bytes = Buffer.from(source);
    bytes[footerStart + offset] = (bytes[footerStart + offset]! + delta) & 0xff;
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  }

  // Found by changing each footer byte: a field of the wrong type (the decoder's TypeError used to
  // pass through) and a schema element claiming children it does not have (the read never ended).
  for (const [name, offset, delta, detail] of [
    ['wrong-type.parquet', 0, 64, 'its fields do not have the types Parquet defines'],
    ['children.parquet', 4, 15, 'the schema lists'],
  ] as const) {
    it(`${name}: one line naming the file and the damage, promptly`, async () => {
      const file = damaged(name, offset, delta);
      const r = await runTidemark(['write', append, '--format', 'parquet', '--input', file], { timeoutMs: 120_000 });
      expect(r.timedOut).toBe(false);
      expect(r.stderr).toContain(`tidemark write: input ${file}: cannot decode Parquet footer (damaged metadata): ${detail}`);
      expect(r.stderr).not.toMatch(/is not a function|Cannot read properties|unexpected error/);
      expect(r.code).toBe(1);
    }, 180_000);
  }
});
