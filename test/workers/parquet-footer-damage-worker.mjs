// Child process of test/parquet-footer-damage.test.ts: reads a Parquet file once for every change
// of one byte of its Thrift footer (each byte in the given range, four ways) and prints one JSON
// line per distinct outcome. A read that never ends would hang this process, which the test kills.
// Imports the packages from dist (build first). Configuration: one JSON argument { file, from, to, dir }.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readParquetFile } from '@tidemark/format';
import { LocalFileIO } from '@tidemark/storage';

const { file, from, to, dir } = JSON.parse(process.argv[2] ?? '{}');
const original = readFileSync(file);
const footerStart = original.length - 8 - original.readUInt32LE(original.length - 8);
const io = new LocalFileIO();
const outcomes = new Map();
for (let i = footerStart + from; i < Math.min(original.length - 8, footerStart + to); i++) {
  for (const delta of [1, 0x0f, 0x40, 0x80]) {
    const bytes = Buffer.from(original);
    bytes[i] = (bytes[i] + delta) & 0xff;
    const path = join(dir, `damaged-${i}-${delta}.parquet`);
    writeFileSync(path, bytes);
    let outcome;
    try {
      for await (const _ of readParquetFile(io, path)) void _;
      outcome = { ok: true };
    } catch (e) {
      outcome = { error: e.constructor.name, message: e.message.replaceAll(path, '<file>').replace(/\d+/g, 'N') };
    }
    rmSync(path);
    const key = JSON.stringify(outcome);
    if (!outcomes.has(key)) outcomes.set(key, { ...outcome, offset: i - footerStart, delta });
  }
}
for (const o of outcomes.values()) process.stdout.write(JSON.stringify(o) + '\n');
await io.close();
