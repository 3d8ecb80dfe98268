/**
 * The file tail: `[metadata][footer][postscript][1 byte postscript length]`. It is read with one
 * ranged read of the last {@link TAIL_PREFETCH_BYTES} (a second one only when the footer and
 * metadata are larger), then the postscript, footer and stripe statistics are decoded.
 */
import { compressionName, decompressStream, isSupportedCompression } from './compression.js';
import { CorruptOrcFileError, OrcDecodeError, UnsupportedOrcFeatureError } from './errors.js';
import { decodeFooter, decodeMetadata, decodePostScript, type ColumnStatistics, type Footer, type PostScript } from './proto.js';
import type { OrcSource } from './source.js';

/** Bytes read from the end of a file up front: the whole tail of most files. */
export const TAIL_PREFETCH_BYTES = 16 * 1024;

const MAGIC = 'ORC';

/** The decoded tail of an ORC file. */
export interface OrcTail {
  readonly postScript: PostScript;
  readonly footer: Footer;
  /** Per-stripe column statistics (empty when the file has no metadata section). */
  readonly stripeStatistics: readonly (readonly ColumnStatistics[])[];
  /** Rows of the file (the sum of the stripes' rows, equal to the footer's count when it has one). */
  readonly numberOfRows: number;
}

export async function readTail(source: OrcSource, path: string): Promise<OrcTail> {
  const size = source.byteLength;
  if (size === 0) throw new CorruptOrcFileError(path, 'the file is empty (0 bytes), not an ORC file');
  if (size < 4) throw new CorruptOrcFileError(path, `the file has only ${size} bytes, too short for an ORC file`);
  const tailLength = Math.min(size, TAIL_PREFETCH_BYTES);
  let tail = await source.read(size - tailLength, tailLength);
  let tailStart = size - tailLength;
  const psLength = tail[tail.length - 1]!;
  if (psLength === 0 || psLength + 1 > size) throw new CorruptOrcFileError(path, `invalid postscript length ${psLength}`);
  let postScript: PostScript;
  try {
    postScript = decodePostScript(tail.subarray(tail.length - 1 - psLength, tail.length - 1));
  } catch (err) {
    throw new CorruptOrcFileError(path, `not an ORC file: ${(err as Error).message}`, { cause: err });
  }
  if (postScript.magic !== MAGIC) {
    // Files of the first ORC version have no magic in the postscript; they start with it.
    const head = await source.read(0, 3);
    if (new TextDecoder().decode(head) !== MAGIC) {
      throw new CorruptOrcFileError(path, 'not an ORC file (no ORC magic in the postscript or at the start of the file)');
    }
  }
  const [major = 0, minor = 0] = postScript.version;
  if (major > 1 || (major === 0 && postScript.version.length > 0 && minor !== 11 && minor !== 12)) {
    throw new UnsupportedOrcFeatureError(
      path,
      `unknown ORC format version ${postScript.version.join('.')} (this reader knows 0.11, 0.12 and 1.x)`,
    );
  }
  if (!isSupportedCompression(postScript.compression)) {
    throw new UnsupportedOrcFeatureError(
      path,
      `compression ${compressionName(postScript.compression)} is not supported (supported: none, zlib, snappy, lz4, zstd); ` +
        'rewrite the file with another orc.compress codec',
    );
  }
  const footerEnd = size - 1 - psLength;
  const metadataStart = footerEnd - postScript.footerLength - postScript.metadataLength;
  if (metadataStart < 3) {
    throw new CorruptOrcFileError(
      path,
      `footer (${postScript.footerLength} bytes) and metadata (${postScript.metadataLength} bytes) do not fit in the file`,
    );
  }
  if (metadataStart < tailStart) {
    tail = await source.read(metadataStart, size - metadataStart);
    tailStart = metadataStart;
  }
  const section = (start: number, length: number): Uint8Array => tail.subarray(start - tailStart, start - tailStart + length);
  const decompress = (bytes: Uint8Array): Uint8Array => decompressStream(postScript.compression, postScript.compressionBlockSize, bytes);
  try {
    const footer = decodeFooter(decompress(section(footerEnd - postScript.footerLength, postScript.footerLength)));
    if (footer.encrypted)
      throw new UnsupportedOrcFeatureError(path, 'the file uses ORC column encryption, which this reader does not support');
    const stripeStatistics =
      postScript.metadataLength > 0 ? decodeMetadata(decompress(section(metadataStart, postScript.metadataLength))) : [];
    const numberOfRows = checkStripes(footer, metadataStart, path);
    return { postScript, footer, stripeStatistics, numberOfRows };
  } catch (err) {
    if (err instanceof OrcDecodeError) throw new CorruptOrcFileError(path, err.message, { cause: err });
    throw err;
  }
}

/** Checks that the stripes lie inside the file and hold the footer's row count; returns their row count. */
function checkStripes(footer: Footer, contentEnd: number, path: string): number {
  let rows = 0;
  for (const [i, s] of footer.stripes.entries()) {
    const end = s.offset + s.indexLength + s.dataLength + s.footerLength;
    if (s.offset < 3 || end > contentEnd) {
      throw new CorruptOrcFileError(path, `stripe ${i} (bytes ${s.offset}..${end}) lies outside the file's content (3..${contentEnd})`);
    }
    rows += s.numberOfRows;
  }
  if (footer.numberOfRows !== null && rows !== footer.numberOfRows) {
    throw new CorruptOrcFileError(path, `the stripes hold ${rows} rows, the footer records ${footer.numberOfRows}`);
  }
  return rows;
}
