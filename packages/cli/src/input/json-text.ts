/**
 * A small JSON parser for `tidemark write` input that loses nothing the table could store:
 * number literals are kept as their text ({@link NumberText}) so BIGINT, DECIMAL and DOUBLE
 * values are converted exactly by the column's type, and objects are insertion-ordered `Map`s so
 * MAP keys keep the order they were written in (plain objects would move `"2"` before `"10"`).
 */
import { CliError } from '../errors.js';

/** A JSON number literal, as written. */
export class NumberText {
  constructor(readonly text: string) {}
}

/** A parsed JSON value: objects are Maps, numbers are {@link NumberText}. */
export type ParsedJson = null | boolean | string | NumberText | ParsedJson[] | Map<string, ParsedJson>;

/** Malformed JSON input; names the line and column. */
export class JsonInputError extends CliError {}

/**
 * Parses one JSON text.
 *
 * @param where - prefix for error messages, e.g. `input line 3`.
 * @throws JsonInputError for malformed input.
 */
export function parseJsonText(text: string, where: string): ParsedJson {
  let pos = 0;
  const fail = (why: string): never => {
    throw new JsonInputError(`${where}: invalid JSON at character ${pos + 1}: ${why}`);
  };
  const ws = (): void => {
    while (pos < text.length && (text[pos] === ' ' || text[pos] === '\t' || text[pos] === '\n' || text[pos] === '\r')) pos++;
  };
  const value = (depth: number): ParsedJson => {
    if (depth > 512) fail('nested too deeply');
    ws();
    const c = text[pos];
    if (c === '{') {
      pos++;
      const out = new Map<string, ParsedJson>();
      ws();
      if (text[pos] === '}') {
        pos++;
        return out;
      }
      for (;;) {
        ws();
        if (text[pos] !== '"') fail('expected a string key');
        const key = string();
        ws();
        if (text[pos] !== ':') fail("expected ':'");
        pos++;
        if (out.has(key)) fail(`duplicate key ${JSON.stringify(key)}`);
        out.set(key, value(depth + 1));
        ws();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === '}') {
          pos++;
          return out;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      pos++;
      const out: ParsedJson[] = [];
      ws();
      if (text[pos] === ']') {
        pos++;
        return out;
      }
      for (;;) {
        out.push(value(depth + 1));
        ws();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === ']') {
          pos++;
          return out;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    if (text.startsWith('true', pos)) return ((pos += 4), true);
    if (text.startsWith('false', pos)) return ((pos += 5), false);
    if (text.startsWith('null', pos)) return ((pos += 4), null);
    const m = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    m.lastIndex = pos;
    const num = m.exec(text);
    if (num && num[0] !== '' && num[0] !== '-') {
      pos += num[0].length;
      return new NumberText(num[0]);
    }
    return fail(c === undefined ? 'unexpected end of input' : `unexpected character ${JSON.stringify(c)}`);
  };
  const string = (): string => {
    const start = pos;
    pos++;
    let out = '';
    for (;;) {
      const c = text[pos];
      if (c === undefined) return fail('unterminated string');
      if (c === '"') {
        pos++;
        return out;
      }
      if (c === '\\') {
        const e = text[pos + 1];
        const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        if (e !== undefined && simple[e] !== undefined) {
          out += simple[e];
          pos += 2;
        } else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(pos + 2, pos + 6))) {
          out += String.fromCharCode(parseInt(text.slice(pos + 2, pos + 6), 16));
          pos += 6;
        } else fail('invalid escape');
        continue;
      }
      if (c < ' ') fail(`control character in string starting at ${start + 1}`);
      out += c;
      pos++;
    }
  };
  const v = value(0);
  ws();
  if (pos !== text.length) fail('unexpected trailing characters');
  return v;
}
