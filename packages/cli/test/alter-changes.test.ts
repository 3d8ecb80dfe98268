import { describe, expect, it } from 'vitest';
import { alterChanges } from '../src/commands/alter-changes.js';
import { UsageError } from '../src/errors.js';

// Moved from core (which no longer parses command lines): the CLI maps its parsed arguments to
// core's typed SchemaChange values. Flags arrive already parsed by args.ts.
describe('alterChanges', () => {
  it('maps every action to typed schema changes', () => {
    expect(alterChanges('add-column', ['x', 'DECIMAL(10,', '2)'], { after: 'v', comment: 'money' })).toEqual([
      { kind: 'add-column', name: 'x', type: 'DECIMAL(10, 2)', description: 'money', position: { kind: 'after', column: 'v' } },
    ]);
    expect(alterChanges('add-column', ['x', 'INT'], { first: true })).toEqual([
      { kind: 'add-column', name: 'x', type: 'INT', position: { kind: 'first' } },
    ]);
    expect(alterChanges('add-column', ['x', 'STRING'], { comment: 'c' })).toEqual([
      { kind: 'add-column', name: 'x', type: 'STRING', description: 'c' },
    ]);
    expect(alterChanges('drop-column', ['x'])).toEqual([{ kind: 'drop-column', name: 'x' }]);
    expect(alterChanges('rename-column', ['a', 'b'])).toEqual([{ kind: 'rename-column', name: 'a', newName: 'b' }]);
    expect(alterChanges('alter-type', ['a', 'BIGINT'])).toEqual([
      { kind: 'alter-type', name: 'a', type: 'BIGINT', keepNullability: false },
    ]);
    expect(alterChanges('set-option', ['a=1', 'b.c=x=y'])).toEqual([
      { kind: 'set-option', key: 'a', value: '1' },
      { kind: 'set-option', key: 'b.c', value: 'x=y' },
    ]);
    expect(alterChanges('set-option', ['bucket-key', 'id'])).toEqual([{ kind: 'set-option', key: 'bucket-key', value: 'id' }]);
    expect(alterChanges('remove-option', ['a', 'b'])).toEqual([
      { kind: 'remove-option', key: 'a' },
      { kind: 'remove-option', key: 'b' },
    ]);
    expect(alterChanges('move-column', ['k'], { after: 'key1' })).toEqual([
      { kind: 'move-column', name: 'k', position: { kind: 'after', column: 'key1' } },
    ]);
    expect(alterChanges('comment-column', ['k', 'the', 'key'])).toEqual([
      { kind: 'update-column-comment', name: 'k', description: 'the key' },
    ]);
    expect(alterChanges('comment', ['hello', 'world'])).toEqual([{ kind: 'update-comment', comment: 'hello world' }]);
  });

  it('refuses arguments that do not fit with a usage error naming the action', () => {
    const bad: Array<[string, string[], Parameters<typeof alterChanges>[2], RegExp]> = [
      ['frobnicate', ['x'], {}, /unknown alter action 'frobnicate'/],
      ['add-column', ['x'], {}, /'alter add-column' needs <name> <type>/],
      ['add-column', ['x', 'INT'], { first: true, after: 'y' }, /either --after or --first/],
      ['drop-column', ['x'], { comment: 'c' }, /--comment does not apply.*usage: alter <table> drop-column/],
      ['drop-column', ['x', 'y'], {}, /expected 1 argument, got 2/],
      ['rename-column', ['a', 'b', 'c'], {}, /expected 2 arguments, got 3/],
      ['set-option', ['novalue', 'a=b', 'c'], {}, /'novalue' is not key=value/],
      ['remove-option', [], {}, /'alter remove-option' needs <key>/],
      ['move-column', ['k'], {}, /--after <col> or --first/],
    ];
    for (const [action, words, flags, re] of bad) {
      let err: unknown;
      try {
        alterChanges(action, words, flags);
      } catch (e) {
        err = e;
      }
      expect(err, `${action} ${words.join(' ')}`).toBeInstanceOf(UsageError);
      expect((err as Error).message).toMatch(re);
    }
  });
});
