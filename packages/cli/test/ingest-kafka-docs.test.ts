/**
 * The `ingest --source kafka://...` command lines of docs/exactly-once.md ("Several processes on one
 * topic" and the Kubernetes Deployment) parse with the options as implemented: every flag exists,
 * its value is accepted, the SASL user and password come from the variables the Deployment sets,
 * and the split lands in the source id. The grace period outlasts the stop bound.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../src/args.js';
import { createContext } from '../src/context.js';
import { ingestCommand } from '../src/commands/ingest.js';
import { kafkaSourceFromArgs } from '../src/commands/ingest-kafka.js';
import { parseDuration } from '../src/options/duration.js';

const doc = readFileSync(fileURLToPath(new URL('../../../docs/exactly-once.md', import.meta.url)), 'utf8');

/** The text of `heading`'s section, up to the next heading. */
function section(heading: string): string {
  const start = doc.indexOf(`\n${heading}\n`);
  expect(start, `docs/exactly-once.md has no '${heading}'`).toBeGreaterThan(0);
  const rest = doc.slice(start + heading.length + 2);
  // Headings of level 2 and below: a level-1 "# " line is a shell comment in a code block.
  return rest.slice(0, rest.search(/\n#{2,6} /));
}

/** Parses an `ingest` command line (after `tidemark`) and builds its Kafka source as the command does. */
async function kafkaSource(argv: readonly string[], env: Record<string, string>) {
  expect(argv[0]).toBe('ingest');
  const args = parseArgs('ingest', ingestCommand.usage, argv.slice(1));
  const o = args.options;
  expect(o.source).toMatch(/^kafka:\/\//);
  if (o['checkpoint-interval'] !== undefined) parseDuration(o['checkpoint-interval'], 'checkpoint-interval');
  const stopTimeoutMs = o['stop-timeout'] === undefined ? 25_000 : parseDuration(o['stop-timeout'], 'stop-timeout');
  const ctx = createContext({ env, cwd: '/' });
  const source = await kafkaSourceFromArgs(o.source!, o.format ?? 'jsonl', o, ['id'], ctx, { warn: () => undefined });
  return { source, options: o, stopTimeoutMs };
}

describe('the Kafka command lines of docs/exactly-once.md', () => {
  it('"Several processes on one topic": each line parses, process i of 2 reads its split', async () => {
    const block = /```sh\n([\s\S]*?)```/.exec(section('### Several processes on one topic'))![1]!;
    const lines = block
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .filter((l) => l.startsWith('tidemark ingest'));
    expect(lines).toHaveLength(2);
    for (const [i, line] of lines.entries()) {
      const { source, options } = await kafkaSource(line.split(/\s+/).slice(1), {});
      expect(source.id).toBe(`kafka:json:orders#split=${i}/2`);
      expect(options['group-id']).toBe('orders-to-lake');
    }
  });

  it('the Kubernetes Deployment: its command parses with the Secret-fed variables, and the grace period outlasts the stop', async () => {
    const yaml = /```yaml\n([\s\S]*?)```/.exec(section('### On Kubernetes'))![1]!;
    const command = JSON.parse(/command: (\[[\s\S]*?\])\n/.exec(yaml)![1]!) as string[];
    expect(command.slice(0, 3)).toEqual(['npx', '--yes', 'tidemark']);
    // The variables the container sets (values from the Secret stand in).
    const env: Record<string, string> = {};
    for (const m of yaml.matchAll(/- name: (\w+)\n\s+(?:value: (\S+)|valueFrom:)/g)) env[m[1]!] = m[2] ?? 'from-secret';
    expect(Object.keys(env)).toEqual(expect.arrayContaining(['TIDEMARK_KAFKA_USER', 'TIDEMARK_KAFKA_PASSWORD']));
    const { source, options, stopTimeoutMs } = await kafkaSource(command.slice(3), env);
    expect(source.id).toBe('kafka:debezium-json:orders#split=0/2');
    expect(options['metrics-port']).toBe(Number(/containerPort: (\d+)/.exec(yaml)![1]));
    expect(options['log-format']).toBe('json');
    const grace = Number(/terminationGracePeriodSeconds: (\d+)/.exec(yaml)![1]) * 1000;
    expect(grace).toBeGreaterThan(stopTimeoutMs);
    // Probes on the metrics port, as "Kubernetes probes" advises.
    expect(yaml).toMatch(/livenessProbe:\s*\{?\s*httpGet: \{ path: \/healthz, port: metrics \}/);
    expect(yaml).toMatch(/readinessProbe:\s*\{?\s*httpGet: \{ path: \/readyz, port: metrics \}/);
  });
});
