/**
 * The change-stream commands of the CLI, in-process on local disk: `read --changes`, `stream`
 * with a consumer, `consumers list|reset|delete`, and `ingest --format <cdc>`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain, type MainResult } from './support/cli-main.js';
import { columns, optionArgs } from './support/table-definitions.mjs';

const run = (argv: string[]): Promise<MainResult> => runMain(argv);

const jsonLines = (text: string): Array<Record<string, unknown>> =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function setup(): Promise<{ dir: string; table: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'tidemark-cli-stream-'));
  dirs.push(dir);
  const table = join(dir, 'wh', 'db.db', 't');
  const schema = JSON.stringify(columns('id INT NOT NULL', 'name STRING'));
  const options = optionArgs({ bucket: '1', 'changelog-producer': 'input' });
  const created = await run(['create', table, '--schema', schema, '--primary-key', 'id', ...options]);
  expect(created.code, created.stderr).toBe(0);
  return { dir, table };
}

describe('change-stream commands', () => {
  it('read --changes, stream with a consumer, consumers list/reset/delete', async () => {
    const { dir, table } = await setup();
    await writeFile(join(dir, 'a.jsonl'), '{"id":1,"name":"a","op":"+I"}\n{"id":2,"name":"b","op":"+I"}\n');
    await writeFile(join(dir, 'b.jsonl'), '{"id":1,"name":"a","op":"-U"}\n{"id":1,"name":"a2","op":"+U"}\n{"id":2,"name":"b","op":"-D"}\n');
    for (const f of ['a.jsonl', 'b.jsonl']) {
      const w = await run(['write', table, '--input', join(dir, f), '--row-kind-field', 'op']);
      expect(w.code, w.stderr).toBe(0);
    }
    const changes = await run(['read', table, '--changes', '--from', '2', '--to', '2']);
    expect(changes.code, changes.stderr).toBe(0);
    expect(jsonLines(changes.stdout)).toEqual([
      { id: 1, name: 'a', _row_kind: '-U' },
      { id: 1, name: 'a2', _row_kind: '+U' },
      { id: 2, name: 'b', _row_kind: '-D' },
    ]);
    const all = await run(['read', table, '--changes', '--from', '1', '--format', 'csv']);
    expect(all.stdout.split('\r\n')[0]).toBe('id,name,_row_kind');
    expect(all.stdout.trim().split('\r\n')).toHaveLength(6);
    const beyond = await run(['read', table, '--changes', '--from', '1', '--to', '9']);
    expect(beyond.code).toBe(2);
    expect(beyond.stderr).toMatch(/--to 9 is after the latest snapshot 2/);
    expect((await run(['read', table, '--from', '1'])).code).toBe(2);

    const first = await run(['stream', table, '--from', 'earliest', '--consumer-id', 'c1', '--max-snapshots', '1']);
    expect(first.code, first.stderr).toBe(0);
    expect(jsonLines(first.stdout).map((r) => r['_row_kind'])).toEqual(['+I', '+I']);
    const listed = await run(['consumers', 'list', table, '--json']);
    expect(jsonLines(listed.stdout)).toMatchObject([{ id: 'c1', nextSnapshot: 2 }]);
    // The consumer's progress wins over --from.
    const second = await run(['tail', table, '--from', 'latest', '--consumer-id', 'c1', '--max-snapshots', '1']);
    expect(jsonLines(second.stdout).map((r) => r['_row_kind'])).toEqual(['-U', '+U', '-D']);
    expect(jsonLines((await run(['consumers', 'list', table, '--json'])).stdout)).toMatchObject([{ id: 'c1', nextSnapshot: 3 }]);
    // A plain stream from latest prints the table as +I rows.
    const latest = await run(['stream', table, '--max-snapshots', '1']);
    expect(jsonLines(latest.stdout)).toEqual([{ id: 1, name: 'a2', _row_kind: '+I' }]);

    // Expiration with --older-than 0 and --retain-min 1 keeps every snapshot the consumer still needs.
    const third = await run(['write', table, '--input', join(dir, 'a.jsonl'), '--row-kind-field', 'op']);
    expect(third.code, third.stderr).toBe(0);
    expect((await run(['consumers', 'reset', table, 'c1', '--snapshot', '2'])).code).toBe(0);
    const expired = await run(['expire-snapshots', table, '--older-than', '0', '--retain-min', '1', '--json']);
    expect(expired.code, expired.stderr).toBe(0);
    expect(JSON.parse(expired.stdout)).toMatchObject({ snapshotsExpired: 1, earliestSnapshotId: 2 });
    const resumed = await run(['stream', table, '--consumer-id', 'c1', '--max-snapshots', '2']);
    expect(jsonLines(resumed.stdout).map((r) => r['_row_kind'])).toEqual(['-U', '+U', '-D', '+I', '+I']);
    expect((await run(['consumers', 'reset', table, 'c1', '--snapshot', '1'])).code).toBe(2);
    const reset = await run(['consumers', 'reset', table, 'c1', '--snapshot', '3', '--json']);
    expect(reset.code).toBe(0);
    expect(JSON.parse(reset.stdout)).toEqual({ command: 'consumers', action: 'reset', table, id: 'c1', nextSnapshot: 3 });
    expect(jsonLines((await run(['consumers', 'list', table, '--json'])).stdout)).toMatchObject([{ id: 'c1', nextSnapshot: 3 }]);
    expect((await run(['consumers', 'reset', table, 'c1', '--snapshot', '7'])).code).toBe(2);
    const deleted = await run(['consumers', 'delete', table, 'c1', '--json']);
    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({ command: 'consumers', action: 'delete', table, id: 'c1' });
    const gone = await run(['consumers', 'delete', table, 'c1']);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/consumer 'c1' does not exist/);
    expect((await run(['consumers', 'list', table])).stdout).toMatch(/no consumers/);
  });

  it('changelogs kept longer than the snapshots: consumers stream them, orphan cleanup keeps them, expire-snapshots --dry-run lists them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-cli-changelog-'));
    dirs.push(dir);
    const table = join(dir, 'wh', 'db.db', 't');
    const schema = JSON.stringify(columns('id INT NOT NULL', 'name STRING'));
    const options = [
      'bucket=1',
      'changelog-producer=input',
      'num-sorted-run.compaction-trigger=50',
      'snapshot.num-retained.min=1',
      'snapshot.num-retained.max=1',
      'changelog.num-retained.min=3',
      'changelog.num-retained.max=50',
      'changelog.time-retained=1 ms',
    ];
    const created = await run(['create', table, '--schema', schema, '--primary-key', 'id', ...options.flatMap((o) => ['--option', o])]);
    expect(created.code, created.stderr).toBe(0);
    const commits = [
      '{"id":1,"name":"a","op":"+I"}\n',
      '{"id":1,"name":"a","op":"-U"}\n{"id":1,"name":"a2","op":"+U"}\n',
      '{"id":2,"name":"b","op":"+I"}\n',
    ];
    for (const [i, text] of commits.entries()) {
      await writeFile(join(dir, `${i}.jsonl`), text);
      const w = await run(['write', table, '--input', join(dir, `${i}.jsonl`), '--row-kind-field', 'op']);
      expect(w.code, w.stderr).toBe(0);
    }
    // The commits' own expiration kept one snapshot and the changelog of the other two.
    expect(jsonLines((await run(['snapshots', table, '--json'])).stdout).map((s) => s['id'])).toEqual([3]);
    const orphans = await run(['remove-orphan-files', table, '--older-than', '0', '--json']);
    expect(orphans.code, orphans.stderr).toBe(0);
    expect(JSON.parse(orphans.stdout)).toMatchObject({ filesDeleted: 0 });
    expect((await run(['consumers', 'reset', table, 'c1', '--snapshot', '1', '--create'])).code).toBe(0);
    const streamed = await run(['stream', table, '--consumer-id', 'c1', '--max-snapshots', '3']);
    expect(streamed.code, streamed.stderr).toBe(0);
    expect(jsonLines(streamed.stdout)).toEqual([
      { id: 1, name: 'a', _row_kind: '+I' },
      { id: 1, name: 'a', _row_kind: '-U' },
      { id: 1, name: 'a2', _row_kind: '+U' },
      { id: 2, name: 'b', _row_kind: '+I' },
    ]);
    expect((await run(['consumers', 'delete', table, 'c1'])).code).toBe(0);
    const verified = await run(['verify', table, '--all', '--json']);
    expect(verified.code, verified.stdout).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, changelogsChecked: [1, 2] });

    // With a shorter minimum, the changelog older than 1 ms goes; a dry run lists it first.
    expect((await run(['alter', table, 'set-option', 'changelog.num-retained.min', '1'])).code).toBe(0);
    const dry = await run(['expire-snapshots', table, '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const planned = JSON.parse(dry.stdout) as { changelogsExpired: number; files: Array<{ path: string }> };
    expect(planned.changelogsExpired).toBe(2);
    const paths = planned.files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining([join(table, 'changelog', 'changelog-1'), join(table, 'changelog', 'changelog-2')]));
    expect(paths.filter((p) => /\/bucket-0\/changelog-[^/]+\.parquet$/.test(p))).toHaveLength(2);
    const real = await run(['expire-snapshots', table, '--json']);
    expect(JSON.parse(real.stdout)).toMatchObject({ changelogsExpired: 2 });
    const after = await run(['read', table, '--changes', '--from', '1']);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/snapshot 1 of .* has expired \(earliest is 3\)/);
  });

  it('ingest --format canal-json lands the events with row kinds; a DDL event fails naming its line', async () => {
    const { dir, table } = await setup();
    const events = [
      {
        data: [
          { id: '1', name: 'a' },
          { id: '2', name: 'b' },
        ],
        type: 'INSERT',
        isDdl: false,
      },
      { data: [{ id: '1', name: 'a2' }], old: [{ name: 'a' }], type: 'UPDATE', isDdl: false },
      { data: [{ id: '2', name: 'b' }], type: 'DELETE', isDdl: false },
    ];
    const source = join(dir, 'canal.jsonl');
    await writeFile(source, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    const ingested = await run(['ingest', table, '--source', source, '--format', 'canal-json', '--commit-user', 'cdc']);
    expect(ingested.code, ingested.stderr).toBe(0);
    expect(jsonLines((await run(['read', table])).stdout)).toEqual([{ id: 1, name: 'a2' }]);
    const changes = jsonLines((await run(['read', table, '--changes', '--from', '1'])).stdout);
    // One checkpoint, one snapshot: its changelog is in key order, each key's changes in event order.
    expect(changes.map((r) => `${r['_row_kind']} ${r['id']} ${r['name']}`)).toEqual(['+I 1 a', '-U 1 a', '+U 1 a2', '+I 2 b', '-D 2 b']);

    await writeFile(
      source,
      `${JSON.stringify(events[0])}\n${JSON.stringify({ type: 'ALTER', isDdl: true, sql: 'ALTER TABLE t ADD c INT' })}\n`,
    );
    const ddl = await run(['ingest', table, '--source', source, '--format', 'canal-json', '--commit-user', 'cdc2']);
    expect(ddl.code).toBe(1);
    expect(ddl.stderr).toContain(`${source} line 2: canal-json schema-change event (type ALTER): ALTER TABLE t ADD c INT`);
    expect(
      (await run(['ingest', table, '--source', source, '--format', 'canal-json', '--row-kind-field', 'op', '--commit-user', 'x'])).code,
    ).toBe(2);
  });

  it('ingest --format needs a primary-key table', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-cli-stream-'));
    dirs.push(dir);
    const table = join(dir, 'wh', 'db.db', 'a');
    await run(['create', table, '--schema', '[{"name":"id","type":"INT"}]']);
    await writeFile(join(dir, 'e.jsonl'), '{"type":"insert","data":{"id":1}}\n');
    const r = await run(['ingest', table, '--source', join(dir, 'e.jsonl'), '--format', 'maxwell-json', '--commit-user', 'u']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/needs a primary-key table/);
  });
});
