/**
 * ORC compression chunks. A compressed stream is a sequence of chunks, each with a 3-byte
 * little-endian header holding `length << 1 | isOriginal`; an original chunk is stored as is,
 * otherwise it is one block of the file's codec (raw deflate, raw snappy, an LZ4 block or a zstd
 * frame) that decompresses to at most the postscript's compression block size.
 *
 * Codecs: node's zlib for deflate, and the pure-JS `snappyjs`, `lz4js` and `fzstd` decoders, which
 * are synchronous (a stream is decoded in one go) and carry no native binaries; LZO has no
 * maintained JavaScript decoder and is refused with an error naming the codec.
 */
import { createRequire } from 'node:module';
import { inflateRawSync } from 'node:zlib';
import { decompress as zstdDecompress } from 'fzstd';

import { CompressionKind } from './proto.js';
import { OrcDecodeError } from './errors.js';

const require = createRequire(import.meta.url);
// Neither package ships type declarations; the functions used are typed here.
const snappy = require('snappyjs') as { uncompress(input: Uint8Array, maxLength?: number): Uint8Array };
const lz4 = require('lz4js') as {
  decompressBlock(src: Uint8Array, dst: Uint8Array, sIndex: number, sLength: number, dIndex: number): number;
};

/** Human name of a compression kind, for messages. */
export function compressionName(kind: number): string {
  return ['none', 'zlib', 'snappy', 'lzo', 'lz4', 'zstd'][kind] ?? `unknown (${kind})`;
}

/** True when this reader can decompress the kind. */
export function isSupportedCompression(kind: number): boolean {
  return (
    kind === CompressionKind.NONE ||
    kind === CompressionKind.ZLIB ||
    kind === CompressionKind.SNAPPY ||
    kind === CompressionKind.LZ4 ||
    kind === CompressionKind.ZSTD
  );
}

function decompressChunk(kind: number, chunk: Uint8Array, blockSize: number): Uint8Array {
  switch (kind) {
    case CompressionKind.ZLIB:
      return inflateRawSync(chunk, { maxOutputLength: Math.max(blockSize, 1) });
    case CompressionKind.SNAPPY:
      return snappy.uncompress(chunk, blockSize);
    case CompressionKind.ZSTD:
      return zstdDecompress(chunk);
    case CompressionKind.LZ4: {
      const out = new Uint8Array(blockSize);
      // lz4js does not bound its writes: a corrupt block writing past `out` is dropped by the typed
      // array, and a short or overlong result is caught by the length checks of the decoders.
      const n = lz4.decompressBlock(chunk, out, 0, chunk.length, 0);
      if (n > blockSize) throw new OrcDecodeError(`LZ4 block decompresses to ${n} bytes, more than the block size ${blockSize}`);
      return out.subarray(0, n);
    }
    default:
      throw new OrcDecodeError(`compression ${compressionName(kind)} is not supported`);
  }
}

/**
 * Decompresses a whole stream (or the footer/metadata section). With `NONE` the bytes are returned
 * as they are. `chunkStarts`, when given, receives the compressed offset and decompressed offset of
 * every chunk (row-index positions address chunks by their compressed offset).
 */
export function decompressStream(
  kind: number,
  blockSize: number,
  bytes: Uint8Array,
  chunkStarts?: { compressed: number[]; decompressed: number[] },
): Uint8Array {
  if (kind === CompressionKind.NONE) return bytes;
  const parts: Uint8Array[] = [];
  let total = 0;
  let pos = 0;
  while (pos < bytes.length) {
    if (pos + 3 > bytes.length) throw new OrcDecodeError(`compressed stream ends inside a chunk header at byte ${pos}`);
    const header = bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16);
    const original = (header & 1) === 1;
    const length = header >>> 1;
    const start = pos + 3;
    if (start + length > bytes.length) {
      throw new OrcDecodeError(`compressed chunk at byte ${pos} declares ${length} bytes, only ${bytes.length - start} remain`);
    }
    chunkStarts?.compressed.push(pos);
    chunkStarts?.decompressed.push(total);
    const chunk = bytes.subarray(start, start + length);
    let out: Uint8Array;
    if (original) out = chunk;
    else {
      try {
        out = decompressChunk(kind, chunk, blockSize);
      } catch (err) {
        if (err instanceof OrcDecodeError) throw err;
        throw new OrcDecodeError(`cannot decompress ${compressionName(kind)} chunk at byte ${pos}: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
    parts.push(out);
    total += out.length;
    pos = start + length;
  }
  if (parts.length === 1) return parts[0]!;
  const result = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    result.set(p, at);
    at += p.length;
  }
  return result;
}
