/**
 * Paimon type JSON (schema files) and SQL type strings (CLI) <-> {@link DataType}.
 *
 * Atomic types are JSON strings such as `"INT NOT NULL"` or `"DECIMAL(10, 2)"`; composite types are
 * objects `{ "type": "ARRAY", "element": ... }` etc. Printing reproduces Java's output exactly.
 */
import { SchemaError } from './errors.js';
import type { JsonObject, JsonValue } from './json.js';
import { MAX_LENGTH, type DataField, type DataType } from './types.js';

/** Parses one type from schema JSON (a string for atomic types, an object for composite types). */
export function parseTypeJson(json: JsonValue | undefined): DataType {
  if (typeof json === 'string') return parseTypeString(json);
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new SchemaError(`invalid type JSON ${JSON.stringify(json)}: expected a string or an object`);
  }
  const obj = json as JsonObject;
  const kindRaw = obj['type'];
  if (typeof kindRaw !== 'string') throw new SchemaError(`composite type JSON lacks a string "type" member`);
  const { base, nullable } = splitNotNull(kindRaw);
  const kind = base.trim().toUpperCase();
  switch (kind) {
    case 'ARRAY':
      return { root: 'ARRAY', nullable, element: parseTypeJson(obj['element']) };
    case 'MULTISET':
      return { root: 'MULTISET', nullable, element: parseTypeJson(obj['element']) };
    case 'MAP':
      return { root: 'MAP', nullable, key: parseTypeJson(obj['key']), value: parseTypeJson(obj['value']) };
    case 'ROW': {
      const fields = obj['fields'];
      if (!Array.isArray(fields)) throw new SchemaError(`ROW type JSON lacks a "fields" array`);
      return { root: 'ROW', nullable, fields: fields.map(parseDataFieldJson) };
    }
    default:
      throw new SchemaError(`unsupported composite type '${kindRaw}'`);
  }
}

/** Parses a DataField object `{ id, name, type, description?, defaultValue? }`. */
export function parseDataFieldJson(json: JsonValue | undefined): DataField {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new SchemaError(`invalid field JSON: expected an object`);
  }
  const o = json as JsonObject;
  const id = o['id'];
  const name = o['name'];
  if (typeof id !== 'number' || !Number.isInteger(id)) throw new SchemaError(`field JSON has no integer "id"`);
  if (typeof name !== 'string') throw new SchemaError(`field ${id} has no string "name"`);
  let type: DataType;
  try {
    type = parseTypeJson(o['type']);
  } catch (e) {
    throw new SchemaError(`field '${name}' (id ${id}): ${(e as Error).message}`, { cause: e });
  }
  const field: { -readonly [K in keyof DataField]: DataField[K] } = { id, name, type };
  const description = o['description'];
  if (typeof description === 'string') field.description = description;
  const defaultValue = o['defaultValue'];
  if (typeof defaultValue === 'string') field.defaultValue = defaultValue;
  return field;
}

/** Prints a type as Java writes it in schema JSON. */
export function typeToJson(type: DataType): JsonValue {
  const suffix = type.nullable ? '' : ' NOT NULL';
  switch (type.root) {
    case 'ARRAY':
    case 'MULTISET':
      return { type: type.root + suffix, element: typeToJson(type.element) };
    case 'MAP':
      return { type: 'MAP' + suffix, key: typeToJson(type.key), value: typeToJson(type.value) };
    case 'ROW':
      return { type: 'ROW' + suffix, fields: type.fields.map(dataFieldToJson) };
    default:
      return typeToString(type);
  }
}

/** Prints a DataField object in Java's member order (`id`, `name`, `type`, `description`, `defaultValue`). */
export function dataFieldToJson(field: DataField): JsonObject {
  return {
    id: field.id,
    name: field.name,
    type: typeToJson(field.type),
    description: field.description,
    defaultValue: field.defaultValue,
  };
}

/**
 * SQL form of a type, as Paimon's `DataType.asSQLString()` prints it: `STRING`, `DECIMAL(10, 2)`,
 * `TIMESTAMP(6) WITH LOCAL TIME ZONE`, `ARRAY<INT>`, `MAP<STRING, INT>`, `ROW<\`a\` INT, \`b\` STRING>`,
 * with ` NOT NULL` when not nullable. For atomic types this equals the schema JSON string.
 */
export function typeToString(type: DataType): string {
  const suffix = type.nullable ? '' : ' NOT NULL';
  switch (type.root) {
    case 'BOOLEAN':
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'BIGINT':
    case 'FLOAT':
    case 'DOUBLE':
    case 'DATE':
      return type.root + suffix;
    case 'DECIMAL':
      return `DECIMAL(${type.precision}, ${type.scale})${suffix}`;
    case 'CHAR':
      return `CHAR(${type.length})${suffix}`;
    case 'VARCHAR':
      return (type.length === MAX_LENGTH ? 'STRING' : `VARCHAR(${type.length})`) + suffix;
    case 'BINARY':
      return `BINARY(${type.length})${suffix}`;
    case 'VARBINARY':
      return (type.length === MAX_LENGTH ? 'BYTES' : `VARBINARY(${type.length})`) + suffix;
    case 'TIME':
      return `TIME(${type.precision})${suffix}`;
    case 'TIMESTAMP':
      return `TIMESTAMP(${type.precision})${suffix}`;
    case 'TIMESTAMP_LTZ':
      return `TIMESTAMP(${type.precision}) WITH LOCAL TIME ZONE${suffix}`;
    case 'ARRAY':
    case 'MULTISET':
      return `${type.root}<${typeToString(type.element)}>${suffix}`;
    case 'MAP':
      return `MAP<${typeToString(type.key)}, ${typeToString(type.value)}>${suffix}`;
    case 'ROW':
      return (
        `ROW<${type.fields
          .map(
            (f) =>
              `\`${f.name.replace(/`/g, '``')}\` ${typeToString(f.type)}${f.description ? ` '${f.description.replace(/'/g, "''")}'` : ''}`,
          )
          .join(', ')}>` + suffix
      );
  }
}

/** True for the numeric types TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE and DECIMAL. */
export function isNumeric(type: DataType): boolean {
  switch (type.root) {
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'BIGINT':
    case 'FLOAT':
    case 'DOUBLE':
    case 'DECIMAL':
      return true;
    default:
      return false;
  }
}

function splitNotNull(s: string): { base: string; nullable: boolean } {
  const m = /^(.*?)\s+NOT\s+NULL\s*$/is.exec(s);
  if (m) return { base: m[1] ?? '', nullable: false };
  const n = /^(.*?)\s+NULL\s*$/is.exec(s);
  if (n) return { base: n[1] ?? '', nullable: true };
  return { base: s, nullable: true };
}

/**
 * Parses a SQL type string such as `INT`, `DECIMAL(10, 2) NOT NULL`, `TIMESTAMP_LTZ(3)`,
 * `ARRAY<INT>`, `MAP<STRING, INT>` or `ROW<a INT, b STRING>` (case-insensitive).
 *
 * Nested ROW fields get ids 0, 1, … in the order their names appear (pre-order); callers that build a
 * schema must reassign ids from their `highestFieldId` counter.
 *
 * @throws SchemaError naming the offending text.
 */
export function parseTypeString(text: string): DataType {
  const p = new TypeParser(text);
  const t = p.type();
  p.skipWs();
  if (p.pos !== text.length) p.fail('unexpected trailing text');
  return t;
}

class TypeParser {
  pos = 0;
  private nextFieldId = 0;
  constructor(private readonly s: string) {}

  fail(msg: string): never {
    throw new SchemaError(`cannot parse type '${this.s}' at position ${this.pos}: ${msg}`);
  }

  skipWs(): void {
    while (this.pos < this.s.length && /\s/.test(this.s[this.pos] ?? '')) this.pos++;
  }

  peekChar(): string | undefined {
    this.skipWs();
    return this.s[this.pos];
  }

  expect(ch: string): void {
    if (this.peekChar() !== ch) this.fail(`expected '${ch}'`);
    this.pos++;
  }

  /** Reads an identifier word (letters, digits, `_`) and upper-cases it. */
  word(): string {
    this.skipWs();
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.pos));
    if (!m) this.fail('expected a type name');
    this.pos += m[0].length;
    return m[0].toUpperCase();
  }

  tryWord(w: string): boolean {
    this.skipWs();
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.pos));
    if (m && m[0].toUpperCase() === w) {
      this.pos += m[0].length;
      return true;
    }
    return false;
  }

  int(): number {
    this.skipWs();
    const m = /^\d+/.exec(this.s.slice(this.pos));
    if (!m) this.fail('expected an integer');
    this.pos += m[0].length;
    return Number(m[0]);
  }

  /** Optional `(n)` or `(n, m)` parameter list. */
  params(): number[] | undefined {
    if (this.peekChar() !== '(') return undefined;
    this.pos++;
    const out = [this.int()];
    while (this.peekChar() === ',') {
      this.pos++;
      out.push(this.int());
    }
    this.expect(')');
    return out;
  }

  nullability(): boolean {
    const save = this.pos;
    if (this.tryWord('NOT')) {
      if (!this.tryWord('NULL')) this.fail("expected 'NULL' after 'NOT'");
      return false;
    }
    if (this.tryWord('NULL')) return true;
    this.pos = save;
    return true;
  }

  type(): DataType {
    const name = this.word();
    const t = this.body(name);
    return { ...t, nullable: this.nullability() } as DataType;
  }

  private one(name: string, ps: number[] | undefined, dflt: number): number {
    if (ps === undefined) return dflt;
    if (ps.length !== 1 || ps[0] === undefined) this.fail(`${name} takes one parameter`);
    return ps[0];
  }

  private body(name: string): DataType {
    const nullable = true;
    switch (name) {
      case 'BOOLEAN':
      case 'TINYINT':
      case 'SMALLINT':
      case 'BIGINT':
      case 'FLOAT':
      case 'DOUBLE':
      case 'DATE':
        return { root: name, nullable };
      case 'INT':
      case 'INTEGER':
        return { root: 'INT', nullable };
      case 'STRING':
        return { root: 'VARCHAR', nullable, length: MAX_LENGTH };
      case 'BYTES':
        return { root: 'VARBINARY', nullable, length: MAX_LENGTH };
      case 'CHAR':
      case 'VARCHAR':
        return { root: name, nullable, length: this.one(name, this.params(), name === 'CHAR' ? 1 : 1) };
      case 'BINARY':
      case 'VARBINARY':
        return { root: name, nullable, length: this.one(name, this.params(), 1) };
      case 'DECIMAL':
      case 'DEC':
      case 'NUMERIC': {
        const ps = this.params() ?? [10, 0];
        if (ps.length > 2) this.fail('DECIMAL takes (precision, scale)');
        const precision = ps[0] ?? 10;
        const scale = ps[1] ?? 0;
        if (precision < 1 || precision > 38 || scale > precision) this.fail(`invalid DECIMAL(${precision}, ${scale})`);
        return { root: 'DECIMAL', nullable, precision, scale };
      }
      case 'TIME': {
        const precision = this.one(name, this.params(), 0);
        this.withoutTimeZone();
        return { root: 'TIME', nullable, precision: this.checkPrecision(precision) };
      }
      case 'TIMESTAMP': {
        const precision = this.checkPrecision(this.one(name, this.params(), 6));
        const save = this.pos;
        if (this.tryWord('WITH')) {
          if (this.tryWord('LOCAL') && this.tryWord('TIME') && this.tryWord('ZONE')) {
            return { root: 'TIMESTAMP_LTZ', nullable, precision };
          }
          this.fail("expected 'WITH LOCAL TIME ZONE'");
        }
        this.pos = save;
        this.withoutTimeZone();
        return { root: 'TIMESTAMP', nullable, precision };
      }
      case 'TIMESTAMP_LTZ':
        return { root: 'TIMESTAMP_LTZ', nullable, precision: this.checkPrecision(this.one(name, this.params(), 6)) };
      case 'ARRAY':
      case 'MULTISET': {
        this.expect('<');
        const element = this.type();
        this.expect('>');
        return { root: name, nullable, element };
      }
      case 'MAP': {
        this.expect('<');
        const key = this.type();
        this.expect(',');
        const value = this.type();
        this.expect('>');
        return { root: 'MAP', nullable, key, value };
      }
      case 'ROW': {
        const open = this.peekChar();
        if (open !== '<' && open !== '(') this.fail("expected '<' after ROW");
        const close = open === '<' ? '>' : ')';
        this.pos++;
        const fields: DataField[] = [];
        if (this.peekChar() !== close) {
          for (;;) {
            const fname = this.fieldName();
            const id = this.nextFieldId++;
            const field: { -readonly [K in keyof DataField]: DataField[K] } = { id, name: fname, type: this.type() };
            const desc = this.quoted();
            if (desc !== undefined) field.description = desc;
            fields.push(field);
            if (this.peekChar() !== ',') break;
            this.pos++;
          }
        }
        this.expect(close);
        return { root: 'ROW', nullable, fields };
      }
      default:
        this.pos -= name.length;
        return this.fail(`unknown type '${name}'`);
    }
  }

  private checkPrecision(p: number): number {
    if (p > 9) this.fail(`precision ${p} is out of range 0..9`);
    return p;
  }

  private withoutTimeZone(): void {
    const save = this.pos;
    if (this.tryWord('WITHOUT')) {
      if (this.tryWord('TIME') && this.tryWord('ZONE')) return;
      this.fail("expected 'WITHOUT TIME ZONE'");
    }
    this.pos = save;
  }

  private fieldName(): string {
    this.skipWs();
    if (this.s[this.pos] === '`') return this.quotedText('`', 'unterminated `identifier`');
    const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(this.s.slice(this.pos));
    if (!m) this.fail('expected a field name');
    this.pos += m[0].length;
    return m[0];
  }

  private quoted(): string | undefined {
    if (this.peekChar() !== "'") return undefined;
    return this.quotedText("'", 'unterminated string');
  }

  /**
   * Reads text enclosed in `quote` starting at the opening quote; a doubled quote stands for one
   * quote character (SQL style).
   */
  private quotedText(quote: string, unterminated: string): string {
    this.pos++;
    let out = '';
    for (;;) {
      const c = this.s[this.pos];
      if (c === undefined) this.fail(unterminated);
      this.pos++;
      if (c === quote) {
        if (this.s[this.pos] === quote) {
          out += quote;
          this.pos++;
        } else return out;
      } else out += c;
    }
  }
}
