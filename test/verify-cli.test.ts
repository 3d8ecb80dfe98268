/**
 * `tidemark verify` finds what is damaged, exits 1, and changes nothing; `maintain --verify`
 * leaves a damaged table alone.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTidemark } from './support/cli-process.js';
import { createPristineCliTable, type PristineCliTable } from './support/pristine-cli-table.js';

const GUARD = { timeoutMs: 30_000 };
let table: PristineCliTable;
let pristine: string;

beforeAll(async () => {
  const writes = [1, 2, 3].map((i) => `{"id":${i},"p":"a"}\n{"id":${i * 10},"p":"b"}\n`);
  table = await createPristineCliTable('tidemark-verify-', writes, GUARD);
  pristine = table.pristine;
});

afterAll(() => table.remove());

const copy = (name: string): string => table.copy(name);

function state(root: string): string[] {
  return (
    readdirSync(root, { recursive: true, withFileTypes: true }) as unknown as Array<{ isFile(): boolean; parentPath: string; name: string }>
  )
    .filter((e) => e.isFile())
    .map(
      (e) =>
        `${join(e.parentPath, e.name)} ${createHash('sha1')
          .update(readFileSync(join(e.parentPath, e.name)))
          .digest('hex')}`,
    )
    .sort();
}

function dataFiles(t: string, p: string): string[] {
  const b = join(t, `p=${p}`, 'bucket-0');
  return readdirSync(b)
    .sort()
    .map((f) => join(b, f));
}

describe('tidemark verify', () => {
  it('reports an intact table as ok with exit 0', async () => {
    const r = await runTidemark(['verify', pristine, '--all'], GUARD);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('ok: checked 3 snapshots, 3 manifest(s), 6 data file(s), 6 row(s)\n');
  });

  it('lists every damaged file, exits 1 and changes nothing', async () => {
    const t = copy('damaged');
    // Each of the 3 writes added one file per partition and one manifest; ordering them by write
    // time pairs them up, so the truncated manifest (the first commit's) hides neither damaged
    // data file (those of the later commits) and every damage is reportable.
    // (mtimes of the pristine table: cpSync gives the copies their copy time)
    const written = (f: string): number => statSync(pristine + f.slice(t.length)).mtimeMs;
    const byTime = (files: string[]): string[] => files.sort((x, y) => written(x) - written(y));
    const [, a1, a2] = byTime(dataFiles(t, 'a'));
    const [, b1] = byTime(dataFiles(t, 'b'));
    rmSync(a1!);
    truncateSync(a2!, 10);
    const manifests = byTime(
      readdirSync(join(t, 'manifest'))
        .filter((f) => !f.startsWith('manifest-list-'))
        .map((f) => join(t, 'manifest', f)),
    );
    expect(manifests).toHaveLength(3);
    truncateSync(manifests[0]!, 50);
    writeFileSync(join(t, 'snapshot', 'LATEST'), '99');
    const before = state(t);
    const r = await runTidemark(['verify', t, '--json'], GUARD);
    expect(r.code).toBe(1);
    const s = JSON.parse(r.stdout) as { ok: boolean; problems: Array<{ path: string; problem: string }> };
    expect(s.ok).toBe(false);
    const byPath = new Map(s.problems.map((p) => [p.path, p.problem]));
    expect(byPath.get(join(t, 'snapshot', 'LATEST'))).toMatch(/LATEST hint says 99, but the snapshots are 1..3/);
    expect(byPath.get(manifests[0]!)).toMatch(/the file is 50 bytes, but the manifest list records \d+/);
    expect(byPath.get(a2!)).toMatch(/the file is 10 bytes, but its manifest entry records \d+/);
    expect(byPath.get(a1!)).toMatch(/missing/);
    expect(byPath.has(b1!)).toBe(false);
    expect(state(t)).toEqual(before);
    const text = await runTidemark(['verify', t], GUARD);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^problem: .*LATEST: LATEST hint says 99/m);
    expect(text.stdout).toMatch(/^\d+ problem\(s\): checked snapshot 3, /m);
  });

  it('finds a file whose content decodes to other rows than recorded', async () => {
    const t = copy('swapped');
    const [a1, a2] = dataFiles(t, 'a');
    const [b1] = dataFiles(t, 'b');
    // Same size, other values: b's file in a's place is caught by its value statistics.
    const bytesB = readFileSync(b1!);
    const sizeA = readFileSync(a1!).length;
    if (bytesB.length === sizeA) {
      writeFileSync(a1!, bytesB);
      const r = await runTidemark(['verify', t], GUARD);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`problem: ${a1}`);
    }
    writeFileSync(a2!, Buffer.alloc(readFileSync(a2!).length, 7)); // same size, garbage
    const r = await runTidemark(['verify', t], GUARD);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`problem: ${a2}`);
  });

  it('--snapshot of a missing snapshot is a failure, --snapshot with --all bad usage', async () => {
    expect((await runTidemark(['verify', pristine, '--snapshot', '9'], GUARD)).code).toBe(1);
    expect((await runTidemark(['verify', pristine, '--snapshot', '1', '--all'], GUARD)).code).toBe(2);
  });

  it('maintain --verify leaves a damaged table alone and exits 1', async () => {
    const t = copy('maintain');
    truncateSync(dataFiles(t, 'a')[0]!, 10);
    const before = state(t);
    const r = await runTidemark(['maintain', t, '--verify'], GUARD);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/verify failed: \d+ problem\(s\) found; no other job was run on this table/);
    expect(state(t)).toEqual(before);
  });
});
