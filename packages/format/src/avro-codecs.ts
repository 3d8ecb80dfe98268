/**
 * Block codecs of Avro object container files, as named in the `avro.codec` header entry.
 *
 * Paimon writes manifests with `zstandard` by default (`manifest.compression = zstd`); `null`,
 * `deflate` and `snappy` are the other codecs Java may have used. Node 20's zlib has no zstd, so
 * zstandard goes through `@mongodb-js/zstd` (native, async) with the pure-JS `fzstd` as decode
 * fallback when the native binding is unavailable or rejects a frame.
 *
 * Why this binding: on the 524 frames of a 110k-entry plan it decompresses in 40–100 ms of CPU off
 * the main thread, a small part of planning. The alternatives on npm were measured on the same
 * frames: fzstd takes about 5× its CPU, on the main thread; `@bokuweb/zstd-wasm` about the same
 * CPU, but on the main thread; `zstddec` needs the frame content size, which Paimon's streaming
 * writer leaves out; `zstd-napi` ships no prebuilt binary in its npm package (it downloads one at
 * install or compiles).
 */
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { decompress as fzstdDecompress } from 'fzstd';
import { FormatError } from './errors.js';

/** Codec names this package can read and write. */
export type AvroCodecName = 'null' | 'deflate' | 'snappy' | 'zstandard';

/** One Avro block codec. Both directions are async because the native zstd binding is. */
export interface AvroCodec {
  readonly name: AvroCodecName;
  compress(data: Uint8Array): Promise<Uint8Array>;
  decompress(data: Uint8Array): Promise<Uint8Array>;
}

/** Options for {@link getAvroCodec}. */
export interface AvroCodecOptions {
  /** zstd level for `zstandard` (Paimon default `file.compression.zstd-level` = 1). */
  readonly zstdLevel?: number;
}

const deflateRaw = promisify(zlib.deflateRaw);
const inflateRaw = promisify(zlib.inflateRaw);

const require = createRequire(import.meta.url);

interface SnappyJs {
  compress(input: Uint8Array): Uint8Array;
  uncompress(input: Uint8Array, maxLength?: number): Uint8Array;
}
// snappyjs ships no type declarations; load it through require with the two functions typed.
const snappy = require('snappyjs') as SnappyJs;

interface NativeZstd {
  compress(data: Buffer, level?: number | null): Promise<Buffer>;
  decompress(data: Buffer): Promise<Buffer>;
}
let nativeZstd: Promise<NativeZstd | null> | undefined;

/** Loads the native zstd binding once; resolves to null when its prebuilt binary is missing. */
function loadNativeZstd(): Promise<NativeZstd | null> {
  nativeZstd ??= import('@mongodb-js/zstd').then(
    (m) => (m as { default?: NativeZstd }).default ?? (m as unknown as NativeZstd),
    () => null,
  );
  return nativeZstd;
}

function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

const nullCodec: AvroCodec = {
  name: 'null',
  compress: async (data) => data,
  decompress: async (data) => data,
};

const deflateCodec: AvroCodec = {
  name: 'deflate',
  // Avro's deflate codec is raw deflate (RFC 1951) without zlib header or checksum.
  compress: async (data) => deflateRaw(data),
  decompress: async (data) => inflateRaw(data),
};

const snappyCodec: AvroCodec = {
  name: 'snappy',
  // Avro frames a snappy block as the compressed bytes followed by a big-endian CRC32 of the
  // uncompressed bytes.
  compress: async (data) => {
    const compressed = snappy.compress(data);
    const out = new Uint8Array(compressed.length + 4);
    out.set(compressed, 0);
    new DataView(out.buffer).setUint32(compressed.length, zlib.crc32(data) >>> 0, false);
    return out;
  },
  decompress: async (data) => {
    if (data.length < 4) throw new FormatError('snappy block is shorter than its 4-byte CRC32');
    const body = data.subarray(0, data.length - 4);
    const expected = new DataView(data.buffer, data.byteOffset + data.length - 4, 4).getUint32(0, false);
    const out = snappy.uncompress(body);
    const actual = zlib.crc32(out) >>> 0;
    if (actual !== expected) {
      throw new FormatError(`snappy block CRC32 mismatch (stored ${expected}, computed ${actual})`);
    }
    return out;
  },
};

function zstandardCodec(level: number): AvroCodec {
  return {
    name: 'zstandard',
    compress: async (data) => {
      const native = await loadNativeZstd();
      if (native === null) {
        throw new FormatError(
          'cannot write zstandard Avro blocks: the native @mongodb-js/zstd binding failed to load; ' +
            "install its prebuilt binary or write with codec 'deflate'",
        );
      }
      return native.compress(asBuffer(data), level);
    },
    decompress: async (data) => {
      const native = await loadNativeZstd();
      if (native !== null) {
        try {
          return await native.decompress(asBuffer(data));
        } catch {
          // fall through: fzstd gives either the bytes or a precise decoding error
        }
      }
      return fzstdDecompress(data);
    },
  };
}

const DEFAULT_ZSTD = zstandardCodec(1);

/** Codec names accepted by {@link getAvroCodec}. */
export const AVRO_CODEC_NAMES: readonly AvroCodecName[] = ['null', 'deflate', 'snappy', 'zstandard'];

/**
 * Returns the codec for an `avro.codec` header value. A missing header value means `null` (Avro
 * spec). Throws {@link FormatError} for codecs this package does not implement (`bzip2`, `xz`).
 */
export function getAvroCodec(name: string | undefined, options: AvroCodecOptions = {}): AvroCodec {
  switch (name ?? 'null') {
    case 'null':
      return nullCodec;
    case 'deflate':
      return deflateCodec;
    case 'snappy':
      return snappyCodec;
    case 'zstandard':
      return options.zstdLevel === undefined || options.zstdLevel === 1 ? DEFAULT_ZSTD : zstandardCodec(options.zstdLevel);
    default:
      throw new FormatError(`unsupported Avro codec '${name}' (supported: ${AVRO_CODEC_NAMES.join(', ')})`);
  }
}
