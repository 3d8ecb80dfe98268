import { InvalidRangeError } from './errors.js';

const encoder = new TextEncoder();

/** Strings are stored as UTF-8. */
export function toBytes(data: Uint8Array | string): Uint8Array {
  return typeof data === 'string' ? encoder.encode(data) : data;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Rejects negative or non-integer range arguments, before any I/O happens. */
export function validateRangeArgs(path: string, offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
    throw new InvalidRangeError(path, offset, length);
  }
}

/**
 * Applies the FileIO range contract to an object of `size` bytes and returns the exclusive end:
 * a range running past the end is cut; a non-empty range starting at or past the end is invalid.
 */
export function clampRange(path: string, offset: number, length: number, size: number): number {
  validateRangeArgs(path, offset, length);
  if (length === 0) return offset;
  if (offset >= size) throw new InvalidRangeError(path, offset, length, size);
  return Math.min(size, offset + length);
}
