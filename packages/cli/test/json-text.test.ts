/**
 * The JSON text parser of `tidemark write` input: values with number texts kept as written and
 * object keys in order, and its errors naming the position and the cause.
 */
import { describe, expect, it } from 'vitest';
import { JsonInputError, NumberText, parseJsonText } from '../src/input/json-text.js';

describe('parseJsonText', () => {
  it('keeps number texts, key order, nesting and escapes', () => {
    const v = parseJsonText(' {"b": [1, -2.50e3, true, null], "a": {"x": "q\\"\\u00e9\\n"}, "c": false} ', 'line 1');
    expect(v).toBeInstanceOf(Map);
    const m = v as Map<string, unknown>;
    expect([...m.keys()]).toEqual(['b', 'a', 'c']);
    const list = m.get('b') as unknown[];
    expect(list.map((x) => (x instanceof NumberText ? x.text : x))).toEqual(['1', '-2.50e3', true, null]);
    expect((m.get('a') as Map<string, unknown>).get('x')).toBe('q"é\n');
    expect(m.get('c')).toBe(false);
    expect(parseJsonText('[]', 'w')).toEqual([]);
    expect(parseJsonText('{}', 'w')).toEqual(new Map());
  });

  it.each([
    ['{"a": 1, "a": 2}', 'line 2: invalid JSON at character 14: duplicate key "a"'],
    ['[1, 2', "line 2: invalid JSON at character 6: expected ',' or ']'"],
    ['{"a": 1 "b": 2}', "line 2: invalid JSON at character 9: expected ',' or '}'"],
    ['{1: 2}', 'line 2: invalid JSON at character 2: expected a string key'],
    ['{"a" 1}', "line 2: invalid JSON at character 6: expected ':'"],
    ['"abc', 'line 2: invalid JSON at character 5: unterminated string'],
    ['"a\\qb"', 'line 2: invalid JSON at character 3: invalid escape'],
    ['"a\u0001"', 'line 2: invalid JSON at character 3: control character in string starting at 1'],
    ['1 2', 'line 2: invalid JSON at character 3: unexpected trailing characters'],
    ['', 'line 2: invalid JSON at character 1: unexpected end of input'],
    ['-', 'line 2: invalid JSON at character 1: unexpected character "-"'],
    ['['.repeat(600), 'line 2: invalid JSON at character 514: nested too deeply'],
  ])('refuses %j', (text, message) => {
    expect(() => parseJsonText(text, 'line 2')).toThrow(JsonInputError);
    expect(() => parseJsonText(text, 'line 2')).toThrow(message);
  });
});
