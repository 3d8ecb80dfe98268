import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinPath, LocalFileIO, StorageConfigError, type FileStatus } from '../src/index.js';
import { describeFileIOBehaviour } from './fileio-behaviour.js';

const base = mkdtempSync(join(tmpdir(), 'tidemark-local-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describeFileIOBehaviour(
  'LocalFileIO (plain paths)',
  () => new LocalFileIO(),
  () => join(base, randomUUID()),
);
describeFileIOBehaviour(
  'LocalFileIO (file:// URIs)',
  () => new LocalFileIO(),
  () => pathToFileURL(join(base, randomUUID())).href,
);

async function collect(it: AsyncIterable<FileStatus>): Promise<string[]> {
  const out: string[] = [];
  for await (const s of it) out.push(s.path);
  return out.sort();
}

describe('LocalFileIO specifics', () => {
  it('file:// and plain paths address the same file; listings keep the input form', async () => {
    const io = new LocalFileIO();
    const dir = join(base, randomUUID());
    const url = pathToFileURL(dir).href;
    await io.write(joinPath(url, 'sub', 'f'), 'via url');
    expect(text(await io.read(join(dir, 'sub', 'f')))).toBe('via url');
    expect(await collect(io.list(url))).toEqual([`${url}/sub/f`]);
    expect(await collect(io.list(dir))).toEqual([join(dir, 'sub', 'f')]);
  });

  it('handles Paimon-style escaped names (%) through file:// URIs and listings', async () => {
    const io = new LocalFileIO();
    const dir = join(base, randomUUID());
    const url = pathToFileURL(dir).href;
    await io.write(joinPath(url, 'ts=10%3A00', 'f'), 'x');
    expect(readdirSync(dir)).toEqual(['ts=10%3A00']);
    const listed = await collect(io.list(url));
    expect(listed).toHaveLength(1);
    expect(text(await io.read(listed[0]!))).toBe('x');
  });

  it('leaves no temp files behind after write and createIfAbsent', async () => {
    const io = new LocalFileIO();
    const dir = join(base, randomUUID());
    await io.write(join(dir, 'a'), 'x');
    await io.write(join(dir, 'a'), 'y');
    await io.createIfAbsent(join(dir, 'b'), 'x');
    await io.createIfAbsent(join(dir, 'b'), 'y');
    expect(readdirSync(dir).sort()).toEqual(['a', 'b']);
  });

  it('lists hidden files too (callers filter)', async () => {
    const io = new LocalFileIO();
    const dir = join(base, randomUUID());
    await io.write(join(dir, '.hidden'), 'x');
    writeFileSync(join(dir, '.x.1234.tmp'), 'partial');
    expect(await collect(io.list(dir))).toEqual([join(dir, '.hidden'), join(dir, '.x.1234.tmp')]);
  });

  it('treats directories as not-found objects', async () => {
    const io = new LocalFileIO();
    const dir = join(base, randomUUID());
    await io.write(join(dir, 'f'), 'x');
    expect(await io.exists(dir)).toBe(false);
    await expect(io.stat(dir)).rejects.toThrow(/Not found/);
  });

  it('lists a large directory as a stream', async () => {
    const io = new LocalFileIO();
    const dir = join(base, randomUUID());
    mkdirSync(dir);
    for (let i = 0; i < 1500; i++) writeFileSync(join(dir, `f-${i}`), '');
    let n = 0;
    for await (const _ of io.list(dir)) n++;
    expect(n).toBe(1500);
  }, 30_000);

  it('rejects s3 locations', async () => {
    await expect(new LocalFileIO().read('s3://b/k')).rejects.toBeInstanceOf(StorageConfigError);
  });

  it('createIfAbsent race: 16 concurrent callers x 50 rounds, exactly one winner whose bytes are stored', async () => {
    const io = new LocalFileIO();
    const dir = join(base, randomUUID());
    for (let round = 0; round < 50; round++) {
      const p = join(dir, 'snapshot', `snapshot-${round}`);
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) => io.createIfAbsent(p, `round ${round} writer ${i} `.repeat(100 + i))),
      );
      const winners = results.flatMap((r, i) => (r === 'created' ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(text(await io.read(p))).toBe(`round ${round} writer ${winners[0]} `.repeat(100 + winners[0]!));
    }
    expect(readdirSync(join(dir, 'snapshot'))).toHaveLength(50); // no temp files left
  }, 60_000);
});

describe('LocalFileIO createIfAbsent across processes', () => {
  const outDir = join(base, 'compiled');
  const raceDir = join(base, `xproc-${randomUUID()}`);
  const rounds = 40;
  const processes = 4;

  beforeAll(async () => {
    // Children run the compiled module, so the race exercises the real implementation.
    const tsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
    const project = fileURLToPath(new URL('../tsconfig.json', import.meta.url));
    await run(process.execPath, [
      tsc,
      '-p',
      project,
      '--outDir',
      outDir,
      '--declaration',
      'false',
      '--declarationMap',
      'false',
      '--sourceMap',
      'false',
    ]);
  }, 120_000);

  it(`${processes} processes x ${rounds} rounds on shared keys: exactly one winner per key`, async () => {
    const goFile = join(raceDir, 'go');
    const moduleUrl = pathToFileURL(join(outDir, 'local-file-io.js')).href;
    const script = `
      import { existsSync } from 'node:fs';
      import { join } from 'node:path';
      const { LocalFileIO } = await import(${JSON.stringify(moduleUrl)});
      const [dir, id, rounds, go] = process.argv.slice(1);
      const io = new LocalFileIO();
      while (!existsSync(go)) await new Promise((r) => setTimeout(r, 1));
      const results = [];
      for (let r = 0; r < Number(rounds); r++) {
        results.push(await io.createIfAbsent(join(dir, 'key-' + r), 'process ' + id + ' round ' + r));
      }
      process.stdout.write(JSON.stringify(results));
    `;
    const children = Array.from({ length: processes }, (_, id) =>
      run(process.execPath, ['--input-type=module', '-e', script, raceDir, String(id), String(rounds), goFile]),
    );
    await new Promise((r) => setTimeout(r, 300));
    await new LocalFileIO().write(goFile, 'go');
    const outputs = (await Promise.all(children)).map((o) => JSON.parse(o) as string[]);
    const io = new LocalFileIO();
    for (let r = 0; r < rounds; r++) {
      const winners = outputs.flatMap((res, id) => (res[r] === 'created' ? [id] : []));
      expect(winners, `round ${r}`).toHaveLength(1);
      expect(text(await io.read(join(raceDir, `key-${r}`)))).toBe(`process ${winners[0]} round ${r}`);
    }
  }, 120_000);
});

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args[0]} exited ${code}: ${err}${out}`))));
  });
}
