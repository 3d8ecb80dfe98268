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
}, 300_000);
