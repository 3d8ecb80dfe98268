/**
 * The README's quick start: `npm run demo` (scripts/demo.mjs) runs end to end on a fresh local
 * warehouse and shows what it says it shows. It broke once when a name it imports stopped being
 * exported; this keeps it honest.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { runNode } from './support/cli-process.js';

const DEMO = fileURLToPath(new URL('../scripts/demo.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tidemark-demo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('npm run demo creates, commits, tags and time-travels in ./demo-warehouse', async () => {
  const r = await runNode(DEMO, [], { cwd: dir, timeoutMs: 240_000 });
  expect(r.stderr).not.toMatch(/Error/);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('committed snapshot 4 (OVERWRITE)');
  expect(r.stdout).toMatch(/resolves to snapshot 2/);
  expect(r.stdout).toContain('$ tidemark snapshots');
  expect(r.stdout).toContain('Done. Explore further with');
  // Each step heading is followed by what it announces: the CLI steps by their command and output.
  const text = r.stdout.replace(/\x1b\[[0-9;]*m/g, '');
  const after = (heading: string): string => {
    const at = text.indexOf(heading);
    expect(at, heading).toBeGreaterThan(0);
    return text.slice(at + heading.length).split(/\n\d+\. /)[0]!;
  };
  expect(after("then tag it 'after-day-2'")).toContain("tagged snapshot 2 as 'after-day-2'");
  const tagged = after("Time travel by tag 'after-day-2', only day 2024-05-02");
  expect(tagged.match(/"day":"2024-05-02"/g)).toHaveLength(2);
  expect(tagged).not.toContain('2024-05-01');
  expect(after('The CLI: every snapshot, with its kind, commit user and record counts')).toMatch(/^\n\$ tidemark snapshots .*\nid \| time/);
  expect(after("The CLI: tag 'after-day-2' as a table, every day")).toMatch(
    /--tag after-day-2 --format table\norder_id \|[^]*2024-05-01[^]*2024-05-02/,
  );
  expect(after('The CLI: snapshot 1 as JSON lines')).toMatch(
    /--snapshot 1 --format jsonl\n\{"order_id":1,[^\n]*\n\{"order_id":2,[^\n]*\n$/,
  );
  expect(after('The CLI: the data files of the latest snapshot')).toMatch(/\$ tidemark files .*\npartition +\| bucket/);
}, 300_000);
