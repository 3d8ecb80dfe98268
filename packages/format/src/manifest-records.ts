/**
 * The records of a manifest file in either format Paimon writes (`manifest.format`): Avro object
 * containers (magic `Obj\x01`) or ORC files (magic `ORC`), told apart by their first bytes.
 */
import { readAvroRecords, type AvroRecord } from './avro-container.js';
import { CorruptFileError } from './errors.js';
import { isOrc, readOrcRecords } from './orc-records.js';

const AVRO_MAGIC = [0x4f, 0x62, 0x6a, 0x01];

/** Refuses bytes that start like neither format, naming both (a manifest may be either). */
function checkMagic(head: Uint8Array, path: string): void {
  if (isOrc(head)) return;
  if (head.length >= 4 && AVRO_MAGIC.every((b, i) => head[i] === b)) return;
  const found = Buffer.from(head.subarray(0, 4)).toString('hex') || 'end of file';
  throw new CorruptFileError(path, `neither an Avro object container nor an ORC file (expected magic 4f626a01 or 4f5243, found ${found})`);
}

/**
 * Streams the records of a manifest, manifest list or index manifest, Avro or ORC. An ORC file is
 * decoded from its tail, so a chunked source is collected first (manifests are bounded by
 * `manifest.target-file-size`); Avro is decoded as it arrives.
 */
export async function* readManifestRecords(
  source: Uint8Array | AsyncIterable<Uint8Array>,
  path: string,
): AsyncGenerator<AvroRecord, void, undefined> {
  if (source instanceof Uint8Array) {
    checkMagic(source, path);
    yield* isOrc(source) ? readOrcRecords(source, path) : readAvroRecords(source, { path });
    return;
  }
  const iterator = source[Symbol.asyncIterator]();
  const head: Uint8Array[] = [];
  let headLength = 0;
  let done = false;
  while (headLength < 4 && !done) {
    const next = await iterator.next();
    if (next.done === true) done = true;
    else {
      head.push(next.value);
      headLength += next.value.length;
    }
  }
  const first = Buffer.concat(head);
  checkMagic(first, path);
  if (isOrc(first)) {
    const parts: Uint8Array[] = [first];
    while (!done) {
      const next = await iterator.next();
      if (next.done === true) done = true;
      else parts.push(next.value);
    }
    yield* readOrcRecords(Buffer.concat(parts), path);
    return;
  }
  async function* rest(): AsyncGenerator<Uint8Array> {
    if (first.length > 0) yield first;
    if (done) return;
    for (;;) {
      const next = await iterator.next();
      if (next.done === true) return;
      yield next.value;
    }
  }
  yield* readAvroRecords(rest(), { path });
}
