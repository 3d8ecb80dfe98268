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
  return new JsonTextParser(text, where).document();
}

/** Simple escapes of a JSON string: the character after `\\`, and what it stands for. */
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** A recursive-descent parse of one JSON text, keeping number texts and key order. */
class JsonTextParser {
  private pos = 0;

  constructor(
    private readonly text: string,
    private readonly where: string,
  ) {}

  /** The whole text: one value, with nothing but white space after it. */
  document(): ParsedJson {
    const v = this.value(0);
    this.ws();
    if (this.pos !== this.text.length) this.fail('unexpected trailing characters');
    return v;
  }

  private fail(why: string): never {
    throw new JsonInputError(`${this.where}: invalid JSON at character ${this.pos + 1}: ${why}`);
  }

  private ws(): void {
    const { text } = this;
    while (
      this.pos < text.length &&
      (text[this.pos] === ' ' || text[this.pos] === '\t' || text[this.pos] === '\n' || text[this.pos] === '\r')
    )
      this.pos++;
  }

  private value(depth: number): ParsedJson {
    if (depth > 512) this.fail('nested too deeply');
    this.ws();
    const { text } = this;
    const c = text[this.pos];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return this.string();
    if (text.startsWith('true', this.pos)) return ((this.pos += 4), true);
    if (text.startsWith('false', this.pos)) return ((this.pos += 5), false);
    if (text.startsWith('null', this.pos)) return ((this.pos += 4), null);
    const m = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    m.lastIndex = this.pos;
    const num = m.exec(text);
    if (num && num[0] !== '' && num[0] !== '-') {
      this.pos += num[0].length;
      return new NumberText(num[0]);
    }
    return this.fail(c === undefined ? 'unexpected end of input' : `unexpected character ${JSON.stringify(c)}`);
  }

  /** `{…}` at the position: keys in order, a duplicate key refused. */
  private object(depth: number): Map<string, ParsedJson> {
    this.pos++;
    const out = new Map<string, ParsedJson>();
    this.ws();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.text[this.pos] !== '"') this.fail('expected a string key');
      const key = this.string();
      this.ws();
      if (this.text[this.pos] !== ':') this.fail("expected ':'");
      this.pos++;
      if (out.has(key)) this.fail(`duplicate key ${JSON.stringify(key)}`);
      out.set(key, this.value(depth + 1));
      if (this.endOfList('}')) return out;
    }
  }

  /** `[…]` at the position. */
  private array(depth: number): ParsedJson[] {
    this.pos++;
    const out: ParsedJson[] = [];
    this.ws();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth + 1));
      if (this.endOfList(']')) return out;
    }
  }

  /** After an element: true at the closing `close` (taken), false at a `,` (taken); else an error. */
  private endOfList(close: '}' | ']'): boolean {
    this.ws();
    if (this.text[this.pos] === ',') {
      this.pos++;
      return false;
    }
    if (this.text[this.pos] === close) {
      this.pos++;
      return true;
    }
    return this.fail(`expected ',' or '${close}'`);
  }

  /** A string at the position (at its opening quote). */
  private string(): string {
    const { text } = this;
    const start = this.pos;
    this.pos++;
    let out = '';
    for (;;) {
      const c = text[this.pos];
      if (c === undefined) return this.fail('unterminated string');
      if (c === '"') {
        this.pos++;
        return out;
      }
      if (c === '\\') {
        const e = text[this.pos + 1];
        if (e !== undefined && SIMPLE_ESCAPES[e] !== undefined) {
          out += SIMPLE_ESCAPES[e];
          this.pos += 2;
        } else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(this.pos + 2, this.pos + 6))) {
          out += String.fromCharCode(parseInt(text.slice(this.pos + 2, this.pos + 6), 16));
          this.pos += 6;
        } else this.fail('invalid escape');
        continue;
      }
      if (c < ' ') this.fail(`control character in string starting at ${start + 1}`);
      out += c;
      this.pos++;
    }
  }
}
