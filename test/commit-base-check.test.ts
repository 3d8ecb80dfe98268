/**
 * `write` refuses to commit on top of a damaged table: a live manifest deleted, truncated or
 * bit-flipped, or a live data file of the bucket written to deleted or truncated. The refusal
 * names the damaged file, creates no snapshot and leaves no data file behind.
 */
import { readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTidemark } from './support/cli-process.js';
import { createPristineCliTable, type PristineCliTable } from './support/pristine-cli-table.js';

const GUARD = { timeoutMs: 30_000 };
let table: PristineCliTable;

beforeAll(async () => {
  table = await createPristineCliTable(
    'tidemark-base-check-',
    [1, 2, 3].map((i) => `{"id":${i},"p":"a"}\n`),
    GUARD,
  );
});

afterAll(() => table.remove());

function listing(root: string): string[] {
  return (readdirSync(root, { recursive: true }) as string[]).sort();
}

const damage: Array<[string, (t: string) => string, RegExp]> = [
  ['a deleted manifest', (t) => del(firstManifest(t)), /manifest .*manifest-[^ ]* cannot be read \(Not found/],
  [
    'a truncated manifest',
    (t) => trunc(firstManifest(t), 100),
    /manifest .* cannot be read \(the file is 100 bytes, but the manifest list records \d+\)/,
  ],
  ['a bit-flipped manifest', (t) => flip(firstManifest(t)), /manifest .* cannot be read/],
  ['a deleted data file', (t) => del(firstDataFile(t)), /live data file .*\.parquet cannot be found/],
  [
    'a truncated data file',
    (t) => trunc(firstDataFile(t), 10),
    /live data file .*\.parquet is damaged \(it is 10 bytes, but its manifest entry records \d+\)/,
  ],
];

function firstManifest(t: string): string {
  return join(
    t,
    'manifest',
    readdirSync(join(t, 'manifest'))
      .filter((f) => !f.startsWith('manifest-list-'))
      .sort()[0]!,
  );
}
function firstDataFile(t: string): string {
  const b = join(t, 'p=a', 'bucket-0');
  return join(b, readdirSync(b).sort()[0]!);
}
function del(p: string): string {
  rmSync(p);
  return p;
}
function trunc(p: string, n: number): string {
  truncateSync(p, n);
  return p;
}
/** Flips a bit of the Avro header's schema JSON (a flip inside a value may still decode: Avro has no checksum). */
function flip(p: string): string {
  const b = readFileSync(p);
  const at = b.indexOf('{"type"');
  b[at] = b[at]! ^ 0x10;
  writeFileSync(p, b);
  return p;
}

describe('write on a damaged table', () => {
  for (const [what, harm, message] of damage) {
    it(`refuses with ${what}`, async () => {
      const t = table.copy(what.replace(/\W+/g, '-'));
      const damaged = harm(t);
      const before = listing(t);
      const r = await runTidemark(['write', t], { stdin: '{"id":9,"p":"a"}\n', ...GUARD });
      expect(r.timedOut).toBe(false);
      expect(r.code).toBe(1);
      // A damaged table is reported as an unexpected error (not the user's input), in one message.
      expect(r.stderr).toMatch(/^tidemark write: (unexpected error: )?refusing to commit on top of snapshot 3 of /);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain(damaged);
      expect(r.stdout).toBe('');
      expect(listing(t)).toEqual(before); // no snapshot 4, no manifest, no data file left behind
    });
  }

  it('commits on the intact table', async () => {
    const t = table.copy('intact');
    const r = await runTidemark(['write', t], { stdin: '{"id":9,"p":"a"}\n', ...GUARD });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('committed snapshot 4 (1 row)\n');
  });
});
