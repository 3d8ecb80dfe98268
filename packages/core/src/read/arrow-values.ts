/**
 * Reading single cells of Arrow data as tidemark's internal values (values.ts of
 * `@tidemark/format`), for key comparison in the merge and for row filters. Decimals and
 * timestamps are read from the raw buffers so they stay exact.
 */
import * as arrow from 'apache-arrow';
import type { DataType, Value } from '@tidemark/format';

/** Returns a function reading row `i` of `data` (typed by the Paimon `type`) as an internal value. */
export function valueReader(data: arrow.Data, type: DataType): (i: number) => Value {
  const valid = (i: number): boolean => data.getValid(i);
  const values = data.values as unknown;
  switch (type.root) {
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'FLOAT':
    case 'DOUBLE':
    case 'DATE':
    case 'TIME': {
      const v = values as ArrayLike<number>;
      return (i) => (valid(i) ? v[i]! : null);
    }
    case 'BIGINT': {
      const v = values as BigInt64Array;
      return (i) => (valid(i) ? v[i]! : null);
    }
    case 'BOOLEAN': {
      const v = values as Uint8Array;
      return (i) => {
        if (!valid(i)) return null;
        const pos = data.offset + i;
        return ((v[pos >> 3]! >> (pos & 7)) & 1) === 1;
      };
    }
    case 'CHAR':
    case 'VARCHAR': {
      const decoder = new TextDecoder();
      const offsets = data.valueOffsets as Int32Array;
      const bytes = values as Uint8Array;
      return (i) => (valid(i) ? decoder.decode(bytes.subarray(offsets[i]!, offsets[i + 1]!)) : null);
    }
    case 'BINARY':
    case 'VARBINARY': {
      const offsets = data.valueOffsets as Int32Array;
      const bytes = values as Uint8Array;
      return (i) => (valid(i) ? bytes.slice(offsets[i]!, offsets[i + 1]!) : null);
    }
    case 'DECIMAL': {
      const words = values as Uint32Array;
      const stride = data.stride;
      const scale = type.scale;
      return (i) => {
        if (!valid(i)) return null;
        let x = 0n;
        for (let w = stride - 1; w >= 0; w--) x = (x << 32n) | BigInt(words[i * stride + w]!);
        return { unscaled: BigInt.asIntN(stride * 32, x), scale };
      };
    }
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      const v = values as BigInt64Array;
      const unit = (data.type as arrow.Timestamp).unit;
      return (i) => (valid(i) ? timestampValue(v[i]!, unit) : null);
    }
    default: {
      // Nested values are not compared by keys or predicates; expose Arrow's own JS view.
      const vector = arrow.makeVector(data);
      return (i) => (valid(i) ? (vector.get(i) as Value) : null);
    }
  }
}

function timestampValue(raw: bigint, unit: arrow.TimeUnit): Value {
  const perMilli = unit === arrow.TimeUnit.NANOSECOND ? 1_000_000n : unit === arrow.TimeUnit.MICROSECOND ? 1_000n : 1n;
  if (unit === arrow.TimeUnit.SECOND) return { millis: Number(raw * 1000n), nanoOfMillis: 0 };
  let millis = raw / perMilli;
  let rest = raw - millis * perMilli;
  if (rest < 0n) {
    millis -= 1n;
    rest += perMilli;
  }
  const nanosPerUnit = unit === arrow.TimeUnit.NANOSECOND ? 1n : unit === arrow.TimeUnit.MICROSECOND ? 1_000n : 0n;
  return { millis: Number(millis), nanoOfMillis: Number(rest * nanosPerUnit) };
}
