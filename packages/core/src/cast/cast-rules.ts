/**
 * Which type changes Paimon allows, as Java decides it: `DataTypeCasts.supportsCast` (implicit and
 * explicit casting tables over type roots and families) and `CastExecutors.resolve` (the cast rule
 * registry: the first rule registered for the target type, root or family and the input root or
 * family, whose `create` may still decline). A column type change is accepted when both agree.
 */
import { typeToString, type DataType } from '@tidemark/format';

type Root = DataType['root'];

type Family =
  | 'PREDEFINED'
  | 'CONSTRUCTED'
  | 'CHARACTER_STRING'
  | 'BINARY_STRING'
  | 'NUMERIC'
  | 'INTEGER_NUMERIC'
  | 'EXACT_NUMERIC'
  | 'APPROXIMATE_NUMERIC'
  | 'DATETIME'
  | 'TIME'
  | 'TIMESTAMP'
  | 'COLLECTION'
  | 'EXTENSION';

/** `DataTypeRoot.getFamilies()`, in `DataTypeFamily` declaration order (the order lookups try them). */
const FAMILIES: Readonly<Record<Root, readonly Family[]>> = {
  CHAR: ['PREDEFINED', 'CHARACTER_STRING'],
  VARCHAR: ['PREDEFINED', 'CHARACTER_STRING'],
  BOOLEAN: ['PREDEFINED'],
  BINARY: ['PREDEFINED', 'BINARY_STRING'],
  VARBINARY: ['PREDEFINED', 'BINARY_STRING'],
  DECIMAL: ['PREDEFINED', 'NUMERIC', 'EXACT_NUMERIC'],
  TINYINT: ['PREDEFINED', 'NUMERIC', 'INTEGER_NUMERIC', 'EXACT_NUMERIC'],
  SMALLINT: ['PREDEFINED', 'NUMERIC', 'INTEGER_NUMERIC', 'EXACT_NUMERIC'],
  INT: ['PREDEFINED', 'NUMERIC', 'INTEGER_NUMERIC', 'EXACT_NUMERIC'],
  BIGINT: ['PREDEFINED', 'NUMERIC', 'INTEGER_NUMERIC', 'EXACT_NUMERIC'],
  FLOAT: ['PREDEFINED', 'NUMERIC', 'APPROXIMATE_NUMERIC'],
  DOUBLE: ['PREDEFINED', 'NUMERIC', 'APPROXIMATE_NUMERIC'],
  DATE: ['PREDEFINED', 'DATETIME'],
  TIME: ['PREDEFINED', 'DATETIME', 'TIME'],
  TIMESTAMP: ['PREDEFINED', 'DATETIME', 'TIMESTAMP'],
  TIMESTAMP_LTZ: ['PREDEFINED', 'DATETIME', 'TIMESTAMP', 'EXTENSION'],
  ARRAY: ['CONSTRUCTED', 'COLLECTION'],
  MULTISET: ['CONSTRUCTED', 'COLLECTION'],
  MAP: ['CONSTRUCTED', 'EXTENSION'],
  ROW: ['CONSTRUCTED'],
};

const ROOTS = Object.keys(FAMILIES) as Root[];
const ofFamily = (...families: Family[]): Root[] => ROOTS.filter((r) => FAMILIES[r].some((f) => families.includes(f)));

/** `DataTypeCasts`: per target root, the roots it is cast from implicitly and explicitly. */
const CASTING: ReadonlyMap<Root, { implicit: ReadonlySet<Root>; explicit: ReadonlySet<Root> }> = (() => {
  const m = new Map<Root, { implicit: Set<Root>; explicit: Set<Root> }>();
  for (const r of ROOTS) m.set(r, { implicit: new Set([r]), explicit: new Set() });
  const rule = (target: Root, implicit: Root[], explicit: Root[]): void => {
    m.set(target, { implicit: new Set([target, ...implicit]), explicit: new Set(explicit) });
  };
  const timestamps: Root[] = ['TIMESTAMP', 'TIMESTAMP_LTZ'];
  const chars = ofFamily('CHARACTER_STRING');
  rule('CHAR', [], ofFamily('PREDEFINED', 'CONSTRUCTED'));
  rule('VARCHAR', chars, ofFamily('PREDEFINED', 'CONSTRUCTED'));
  rule('BOOLEAN', [], [...chars, ...ofFamily('INTEGER_NUMERIC')]);
  rule('BINARY', [], [...chars, 'VARBINARY']);
  rule('VARBINARY', ofFamily('BINARY_STRING'), [...chars, 'BINARY']);
  rule('DECIMAL', ofFamily('NUMERIC'), [...chars, 'BOOLEAN', ...timestamps]);
  const numericExplicit: Root[] = [...ofFamily('NUMERIC'), ...chars, 'BOOLEAN', ...timestamps];
  rule('TINYINT', [], numericExplicit);
  rule('SMALLINT', ['TINYINT'], numericExplicit);
  rule('INT', ['TINYINT', 'SMALLINT'], numericExplicit);
  rule('BIGINT', ['TINYINT', 'SMALLINT', 'INT'], numericExplicit);
  rule('FLOAT', ['TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'DECIMAL'], numericExplicit);
  rule('DOUBLE', ofFamily('NUMERIC'), [...chars, 'BOOLEAN', ...timestamps]);
  rule('DATE', ['TIMESTAMP'], [...ofFamily('TIMESTAMP'), ...chars]);
  rule('TIME', ['TIMESTAMP'], [...ofFamily('TIME', 'TIMESTAMP'), ...chars]);
  rule('TIMESTAMP', ['TIMESTAMP_LTZ'], [...ofFamily('DATETIME'), ...chars, ...ofFamily('NUMERIC')]);
  rule('TIMESTAMP_LTZ', ['TIMESTAMP'], [...ofFamily('DATETIME'), ...chars, ...ofFamily('NUMERIC')]);
  return m;
})();

/** Two types equal but for nullability (at every level). */
export function sameTypeIgnoringNullability(a: DataType, b: DataType): boolean {
  return typeToString({ ...a, nullable: true } as DataType) === typeToString({ ...b, nullable: true } as DataType);
}

/**
 * `DataTypeCasts.supportsCast(source, target, allowExplicit)`: a NOT NULL target from a nullable
 * source only explicitly; equal types (ignoring nullability) always; otherwise the casting tables.
 */
export function supportsCast(source: DataType, target: DataType, allowExplicit: boolean): boolean {
  if (source.nullable && !target.nullable && !allowExplicit) return false;
  if (sameTypeIgnoringNullability(source, target)) return true;
  const c = CASTING.get(target.root)!;
  if (c.implicit.has(source.root)) return true;
  return allowExplicit && c.explicit.has(source.root);
}

/** The names of Paimon's cast rule classes (`org.apache.paimon.casting`). */
export type CastRuleName =
  | 'DecimalToDecimalCastRule'
  | 'NumericPrimitiveToDecimalCastRule'
  | 'DecimalToNumericPrimitiveCastRule'
  | 'NumericPrimitiveCastRule'
  | 'NumericPrimitiveToTimestamp'
  | 'BooleanToNumericCastRule'
  | 'NumericToBooleanCastRule'
  | 'NumericToStringCastRule'
  | 'BooleanToStringCastRule'
  | 'TimestampToStringCastRule'
  | 'TimeToStringCastRule'
  | 'DateToStringCastRule'
  | 'StringToStringCastRule'
  | 'ArrayToStringCastRule'
  | 'MapToStringCastRule'
  | 'RowToStringCastRule'
  | 'StringToBooleanCastRule'
  | 'StringToDecimalCastRule'
  | 'StringToNumericPrimitiveCastRule'
  | 'StringToDateCastRule'
  | 'StringToTimeCastRule'
  | 'StringToTimestampCastRule'
  | 'StringToBinaryCastRule'
  | 'StringToArrayCastRule'
  | 'StringToMapCastRule'
  | 'StringToRowCastRule'
  | 'TimestampToTimestampCastRule'
  | 'TimestampToDateCastRule'
  | 'TimestampToTimeCastRule'
  | 'DateToTimestampCastRule'
  | 'TimeToTimestampCastRule'
  | 'TimestampToNumericPrimitiveCastRule'
  | 'BinaryToBinaryCastRule'
  | 'BinaryToStringCastRule';

type Key = Root | Family;

interface RuleSpec {
  readonly name: CastRuleName;
  readonly inputs: readonly Key[];
  readonly targets: readonly Key[];
  /** When `create` returns null for these types (the rule matched but has no executor). */
  readonly declines?: (input: DataType, target: DataType) => boolean;
}

const TS: Key[] = ['TIMESTAMP', 'TIMESTAMP_LTZ'];

/** `CastExecutors`' registration order; a later rule replaces an earlier one for the same keys. */
const RULES: readonly RuleSpec[] = [
  { name: 'DecimalToDecimalCastRule', inputs: ['DECIMAL'], targets: ['DECIMAL'] },
  { name: 'NumericPrimitiveToDecimalCastRule', inputs: ['INTEGER_NUMERIC', 'APPROXIMATE_NUMERIC'], targets: ['DECIMAL'] },
  { name: 'DecimalToNumericPrimitiveCastRule', inputs: ['DECIMAL'], targets: ['INTEGER_NUMERIC', 'APPROXIMATE_NUMERIC'] },
  {
    name: 'NumericPrimitiveCastRule',
    inputs: ['INTEGER_NUMERIC', 'APPROXIMATE_NUMERIC'],
    targets: ['INTEGER_NUMERIC', 'APPROXIMATE_NUMERIC'],
  },
  // Only INT and BIGINT seconds have an executor.
  { name: 'NumericPrimitiveToTimestamp', inputs: ['NUMERIC'], targets: TS, declines: (i) => i.root !== 'INT' && i.root !== 'BIGINT' },
  { name: 'BooleanToNumericCastRule', inputs: ['BOOLEAN'], targets: ['NUMERIC'] },
  { name: 'NumericToBooleanCastRule', inputs: ['INTEGER_NUMERIC'], targets: ['BOOLEAN'] },
  { name: 'NumericToStringCastRule', inputs: ['NUMERIC'], targets: ['CHARACTER_STRING'] },
  { name: 'BooleanToStringCastRule', inputs: ['BOOLEAN'], targets: ['CHARACTER_STRING'] },
  { name: 'TimestampToStringCastRule', inputs: ['TIMESTAMP'], targets: ['CHARACTER_STRING'] },
  { name: 'TimeToStringCastRule', inputs: ['TIME'], targets: ['CHARACTER_STRING'] },
  { name: 'DateToStringCastRule', inputs: ['DATE'], targets: ['CHARACTER_STRING'] },
  { name: 'StringToStringCastRule', inputs: ['CHARACTER_STRING'], targets: ['CHARACTER_STRING'] },
  { name: 'ArrayToStringCastRule', inputs: ['ARRAY'], targets: ['CHARACTER_STRING'] },
  { name: 'MapToStringCastRule', inputs: ['MAP'], targets: ['CHARACTER_STRING'] },
  { name: 'RowToStringCastRule', inputs: ['ROW'], targets: ['CHARACTER_STRING'] },
  { name: 'StringToBooleanCastRule', inputs: ['CHARACTER_STRING'], targets: ['BOOLEAN'] },
  { name: 'StringToDecimalCastRule', inputs: ['CHARACTER_STRING'], targets: ['DECIMAL'] },
  { name: 'StringToNumericPrimitiveCastRule', inputs: ['CHARACTER_STRING'], targets: ['INTEGER_NUMERIC', 'APPROXIMATE_NUMERIC'] },
  { name: 'StringToDateCastRule', inputs: ['CHARACTER_STRING'], targets: ['DATE'] },
  { name: 'StringToTimeCastRule', inputs: ['CHARACTER_STRING'], targets: ['TIME'] },
  { name: 'StringToTimestampCastRule', inputs: ['CHARACTER_STRING'], targets: ['TIMESTAMP'] },
  { name: 'StringToBinaryCastRule', inputs: ['CHARACTER_STRING'], targets: ['BINARY_STRING'] },
  { name: 'StringToArrayCastRule', inputs: ['CHARACTER_STRING'], targets: ['ARRAY'] },
  { name: 'StringToMapCastRule', inputs: ['CHARACTER_STRING'], targets: ['MAP'] },
  { name: 'StringToRowCastRule', inputs: ['CHARACTER_STRING'], targets: ['ROW'] },
  { name: 'TimestampToTimestampCastRule', inputs: TS, targets: TS },
  { name: 'TimestampToDateCastRule', inputs: TS, targets: ['DATE'] },
  { name: 'TimestampToTimeCastRule', inputs: TS, targets: ['TIME'] },
  { name: 'DateToTimestampCastRule', inputs: ['DATE'], targets: TS },
  { name: 'TimeToTimestampCastRule', inputs: ['TIME'], targets: TS },
  { name: 'TimestampToNumericPrimitiveCastRule', inputs: TS, targets: ['BIGINT', 'INT'] },
  { name: 'BinaryToBinaryCastRule', inputs: ['BINARY_STRING'], targets: ['BINARY_STRING'] },
  { name: 'BinaryToStringCastRule', inputs: ['BINARY_STRING'], targets: ['CHARACTER_STRING'] },
];

/** target key → input key → rule, as `CastExecutors.addRule` fills its map. */
const REGISTRY: ReadonlyMap<Key, ReadonlyMap<Key, RuleSpec>> = (() => {
  const m = new Map<Key, Map<Key, RuleSpec>>();
  for (const rule of RULES) {
    for (const t of rule.targets) {
      let byInput = m.get(t);
      if (!byInput) m.set(t, (byInput = new Map()));
      for (const i of rule.inputs) byInput.set(i, rule);
    }
  }
  return m;
})();

/**
 * `CastExecutors.resolve(input, target) != null`: the rule that casts `input` to `target`, or null
 * when no rule matches or the matching rule has no executor for these types.
 */
export function castRuleOf(input: DataType, target: DataType): CastRuleName | null {
  for (const tk of [target.root, ...FAMILIES[target.root]] as Key[]) {
    const byInput = REGISTRY.get(tk);
    if (!byInput) continue;
    for (const ik of [input.root, ...FAMILIES[input.root]] as Key[]) {
      const rule = byInput.get(ik);
      if (rule) return rule.declines?.(input, target) ? null : rule.name;
    }
  }
  return null;
}

/** The settings of a column type change that Paimon reads from the table's options. */
export interface TypeChangeOptions {
  /** `disable-explicit-type-casting` (default false): only implicit (lossless) casts. */
  readonly disableExplicitTypeCasting?: boolean;
}

/**
 * Why `from` cannot change to `to` the way `SchemaManager` checks an `UpdateColumnType` (cast
 * support and an executor), or null when it can. Equal types (ignoring nullability) always can:
 * that is a nullability change. Nullability itself is checked by the caller.
 */
export function typeChangeRefusal(from: DataType, to: DataType, options: TypeChangeOptions = {}): string | null {
  if (sameTypeIgnoringNullability(from, to)) return null;
  const allowExplicit = !options.disableExplicitTypeCasting;
  if (!supportsCast(from, to, allowExplicit)) {
    return allowExplicit
      ? 'Paimon has no cast between these types'
      : "only implicit (lossless) casts are allowed while 'disable-explicit-type-casting' is true";
  }
  if (castRuleOf(from, to) === null) {
    if (from.root === to.root && (from.root === 'ARRAY' || from.root === 'MAP' || from.root === 'ROW' || from.root === 'MULTISET')) {
      return 'nested types change only through their fields, which tidemark does not support';
    }
    return 'Paimon has no cast rule that reads the old values as the new type';
  }
  return null;
}

const INT_RANK: Readonly<Partial<Record<Root, number>>> = { TINYINT: 0, SMALLINT: 1, INT: 2, BIGINT: 3 };

/**
 * Whether statistics (min/max) of a file column written as `file` still bound its values read as
 * `read`. Paimon drops a filter on a column whose type changed from stats pruning (its
 * `filterUnsafeFilter` / `devolveFilters`) except for integer widening; tidemark keeps the other
 * casts that leave every value unchanged too (longer VARCHAR/VARBINARY, more DECIMAL precision at
 * the same scale, more TIMESTAMP precision). Any other change — narrowing, CHAR padding, a change
 * of type family — would compare old-type bounds with new-type values and could skip matching rows.
 */
export function statsSurviveCast(file: DataType, read: DataType): boolean {
  if (sameTypeIgnoringNullability(file, read)) return true;
  const fi = INT_RANK[file.root];
  const ri = INT_RANK[read.root];
  if (fi !== undefined && ri !== undefined) return fi <= ri;
  if (read.root === 'VARCHAR' && (file.root === 'VARCHAR' || file.root === 'CHAR')) return file.length <= read.length;
  if (read.root === 'VARBINARY' && (file.root === 'VARBINARY' || file.root === 'BINARY')) return file.length <= read.length;
  if (file.root === 'DECIMAL' && read.root === 'DECIMAL') return file.scale === read.scale && file.precision <= read.precision;
  if ((file.root === 'TIMESTAMP' || file.root === 'TIMESTAMP_LTZ') && read.root === file.root) return file.precision <= read.precision;
  return false;
}

/**
 * {@link statsSurviveCast} for file-format statistics (Parquet row groups, ORC stripes), which are
 * decoded in the read type's representation: the type root must not change either.
 */
export function formatStatsSurviveCast(file: DataType, read: DataType): boolean {
  return file.root === read.root && statsSurviveCast(file, read);
}
