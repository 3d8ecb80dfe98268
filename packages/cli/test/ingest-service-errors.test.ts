/**
 * `ingest --log-format json` when the service itself cannot start (the metrics port is taken):
 * the failure is one JSON error event like any other, not a text line between JSON lines.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/index.js';
import { MemoryStream } from './helpers.js';

let dir: string;
let taken: Server;
let port: number;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidemark-ingest-errors-'));
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, resolve));
  port = (taken.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => taken.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  const code = await main(argv, { stdout, stderr, env: {}, cwd: dir, signal: new AbortController().signal });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('ingest --log-format json, service start-up failures', () => {
  it('a metrics port in use is one JSON error event naming the port; exit 1', async () => {
    const schema = JSON.stringify([{ name: 'id', type: 'BIGINT NOT NULL' }]);
    expect((await run(['create', 't', '--schema', schema])).code).toBe(0);
    await writeFile(join(dir, 'in.jsonl'), '{"id":1}\n');
    const ingest = ['ingest', 't', '--source', 'in.jsonl', '--state', 'st', '--metrics-port', String(port)];

    const json = await run([...ingest, '--log-format', 'json']);
    expect(json.code).toBe(1);
    const events = json.stderr
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ level: 'error', error: 'SinkUsageError' });
    expect(events[0]!['msg']).toMatch(new RegExp(`cannot serve metrics on \\*:${port}: the address is in use`));

    // Text format: the usual one line.
    const text = await run(ingest);
    expect(text.code).toBe(1);
    expect(text.stderr).toBe(`tidemark ingest: cannot serve metrics on *:${port}: the address is in use\n`);
  });
});
