/**
 * JSON codec for sink state and committables that keeps `bigint` and `Uint8Array` values exact:
 * a bigint is written as `{"$bigint":"123"}`, bytes as `{"$bytes":"<base64>"}`. Plain JSON
 * cannot carry either (bigints throw, typed arrays become index maps), and sequence numbers and
 * commit identifiers exceed 2^53.
 *
 * Objects of the encoded value must not themselves consist of exactly one `$bigint` or `$bytes`
 * key; the sink's own structures never do.
 */
import { CorruptStateError } from './errors.js';

const BIGINT_TAG = '$bigint';
const BYTES_TAG = '$bytes';

function replacer(this: unknown, key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return { [BIGINT_TAG]: value.toString() };
  // The holder's own value: a Buffer (as file metadata read from manifests holds) has already
  // been turned into `{ type: 'Buffer', data: [...] }` by its toJSON when `value` arrives here.
  const raw = (this as Record<string, unknown>)[key];
  if (raw instanceof Uint8Array) return { [BYTES_TAG]: Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64') };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1) {
      const v = (value as Record<string, unknown>)[keys[0]!];
      if (keys[0] === BIGINT_TAG && typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
      if (keys[0] === BYTES_TAG && typeof v === 'string') return new Uint8Array(Buffer.from(v, 'base64'));
    }
  }
  return value;
}

/** Encodes `value` as JSON, keeping bigints and byte arrays exact (see the module comment). */
export function encodeSinkJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, replacer, indent);
}

/**
 * Decodes text written by {@link encodeSinkJson}.
 *
 * @param what - names the file or field in the error message.
 * @throws CorruptStateError when the text is not valid JSON.
 */
export function decodeSinkJson(text: string, what = 'sink JSON'): unknown {
  try {
    return JSON.parse(text, reviver);
  } catch (e) {
    throw new CorruptStateError(`${what} is not valid JSON: ${(e as Error).message}`, { cause: e });
  }
}
