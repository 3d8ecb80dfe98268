/**
 * Stripe and row-group pruning of ORC data files: a read's filter translated into the ORC reader's
 * predicate over the file's column names, for the columns whose ORC statistics order values as the
 * filter does. Anything else becomes "may match": dropped under AND, and it makes an OR (or a NOT)
 * unusable as a whole, so the translated predicate never skips a row the filter keeps.
 */
import type { DataField, OrcLiteral, OrcPredicate } from '@tidemark/format';
import { formatStatsSurviveCast } from '../cast/cast-rules.js';
import type { Predicate } from '../predicate.js';

/** Types whose ORC statistics (integer, double, string, date) hold the predicate's literals as they compare. */
const PRUNABLE = new Set(['TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'FLOAT', 'DOUBLE', 'VARCHAR', 'DATE']);

const OPS = { '=': 'eq', '!=': 'ne', '<': 'lt', '<=': 'le', '>': 'gt', '>=': 'ge' } as const;

/**
 * The ORC predicate of a read: `predicate` names read fields; `fileFields[i]` is the file's field
 * of `readFields[i]` (matched by id, absent when the file lacks it). Null when nothing can prune.
 */
export function orcPredicate(
  predicate: Predicate,
  readFields: readonly DataField[],
  fileFields: readonly (DataField | undefined)[],
): OrcPredicate | null {
  const physical = (column: string): string | null => {
    const i = readFields.findIndex((f) => f.name === column);
    const fileField = i < 0 ? undefined : fileFields[i];
    const readType = i < 0 ? undefined : readFields[i]!.type;
    // A type changed by schema evolution may order differently or change values: leave it unknown.
    if (!fileField || !readType || !formatStatsSurviveCast(fileField.type, readType) || !PRUNABLE.has(readType.root)) return null;
    return fileField.name;
  };
  const translate = (p: Predicate): OrcPredicate | null => {
    switch (p.kind) {
      case 'and': {
        const children = p.children.map(translate).filter((c): c is OrcPredicate => c !== null);
        return children.length === 0 ? null : children.length === 1 ? children[0]! : { op: 'and', children };
      }
      case 'or': {
        const children = p.children.map(translate);
        return children.length > 0 && children.every((c) => c !== null) ? { op: 'or', children: children as OrcPredicate[] } : null;
      }
      case 'not':
        return null; // statistics bound values, not a condition's negation
      case 'like':
        return null; // left to the row filter and the prefix check on file statistics
      case 'isNull': {
        const column = physical(p.column);
        return column === null ? null : { op: p.negated ? 'isNotNull' : 'isNull', column };
      }
      case 'in': {
        const column = physical(p.column);
        if (column === null || p.negated || !p.values.every(usableLiteral)) return null;
        return { op: 'in', column, values: p.values as OrcLiteral[] };
      }
      case 'compare': {
        const column = physical(p.column);
        if (column === null || !usableLiteral(p.value)) return null;
        return { op: OPS[p.op], column, value: p.value };
      }
    }
  };
  return translate(predicate);
}

/** A literal the ORC statistics compare correctly (a null or NaN literal is left to the row filter). */
function usableLiteral(v: unknown): v is OrcLiteral {
  return typeof v === 'bigint' || typeof v === 'string' || (typeof v === 'number' && !Number.isNaN(v));
}
