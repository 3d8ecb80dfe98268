/**
 * An int32 -> small-int map with open addressing over typed arrays: a partition's hash index can
 * hold millions of key hashes, and a JS `Map` costs about ten times as much memory per entry.
 */

const EMPTY = -1;

export class IntToIntHashMap {
  private keys: Int32Array;
  private values: Int32Array;
  private used = 0;

  constructor(expected = 16) {
    let cap = 16;
    while (cap * 0.6 < expected) cap *= 2;
    this.keys = new Int32Array(cap);
    this.values = new Int32Array(cap).fill(EMPTY);
  }

  get size(): number {
    return this.used;
  }

  /** The value stored for `key`, or -1. */
  get(key: number): number {
    const mask = this.keys.length - 1;
    for (let i = mix(key) & mask; ; i = (i + 1) & mask) {
      const v = this.values[i]!;
      if (v === EMPTY) return EMPTY;
      if (this.keys[i] === key) return v;
    }
  }

  has(key: number): boolean {
    return this.get(key) !== EMPTY;
  }

  /** Stores `value` (>= 0) for `key`, replacing a previous value. */
  set(key: number, value: number): void {
    if (this.used + 1 > this.keys.length * 0.6) this.grow();
    const mask = this.keys.length - 1;
    for (let i = mix(key) & mask; ; i = (i + 1) & mask) {
      if (this.values[i] === EMPTY) {
        this.keys[i] = key;
        this.values[i] = value;
        this.used++;
        return;
      }
      if (this.keys[i] === key) {
        this.values[i] = value;
        return;
      }
    }
  }

  private grow(): void {
    const keys = this.keys;
    const values = this.values;
    this.keys = new Int32Array(keys.length * 2);
    this.values = new Int32Array(keys.length * 2).fill(EMPTY);
    this.used = 0;
    for (let i = 0; i < keys.length; i++) if (values[i] !== EMPTY) this.set(keys[i]!, values[i]!);
  }
}

/** Spreads clustered keys over the table (fmix32 of murmur3). */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
