/**
 * The ORC type tree (the footer's flattened pre-order type list rebuilt as nodes) and its Arrow
 * types: integers keep their width, strings/char/varchar become Utf8, TIMESTAMP becomes a
 * nanosecond timestamp without a zone (wall clock), TIMESTAMP_INSTANT one in UTC, DECIMAL a
 * 128-bit decimal, MAP an Arrow map of `entries<key, value>` and UNION a dense union. Type
 * attributes (such as `paimon.id`) become Arrow field metadata.
 */
import * as arrow from 'apache-arrow';

import { OrcDecodeError } from './errors.js';
import { TypeKind, type OrcType } from './proto.js';

/** One node of the type tree; `id` is the ORC column id (the index in the footer's type list). */
export interface OrcTypeNode {
  readonly id: number;
  readonly kind: TypeKind;
  /** Largest column id in this subtree (this node's id for primitives). */
  readonly maxId: number;
  readonly children: readonly OrcTypeNode[];
  /** Struct field names (empty for other kinds). */
  readonly fieldNames: readonly string[];
  readonly maximumLength: number;
  readonly precision: number;
  readonly scale: number;
  readonly attributes: ReadonlyMap<string, string>;
}

/**
 * Decimal precision and scale of files written before ORC recorded them (Hive 0.11, precision 0):
 * values carry their own scale and are read at scale 6, digits beyond it truncated, as the ORC
 * C++ reader does by default.
 */
export const HIVE11_DECIMAL_PRECISION = 38;
export const HIVE11_DECIMAL_SCALE = 6;

/** Rebuilds the tree from the footer's type list, checking that subtype ids are in range and acyclic. */
export function buildTypeTree(types: readonly OrcType[]): OrcTypeNode {
  if (types.length === 0) throw new OrcDecodeError('the footer lists no types');
  const build = (id: number, depth: number): OrcTypeNode => {
    const t = types[id];
    if (!t) throw new OrcDecodeError(`type ${id} is referenced but the footer lists only ${types.length} types`);
    if (depth > 256) throw new OrcDecodeError('the type tree is deeper than 256 levels');
    if (!(t.kind in TypeKind)) throw new OrcDecodeError(`type ${id} has unknown kind ${t.kind}`);
    const children: OrcTypeNode[] = [];
    let maxId = id;
    for (const sub of t.subtypes) {
      // Pre-order: each child follows everything of its previous sibling.
      if (sub <= maxId) throw new OrcDecodeError(`type ${id} lists subtype ${sub} out of pre-order`);
      const child = build(sub, depth + 1);
      children.push(child);
      maxId = child.maxId;
    }
    const expected: Partial<Record<TypeKind, number>> = { [TypeKind.LIST]: 1, [TypeKind.MAP]: 2 };
    const want = expected[t.kind];
    if (want !== undefined && children.length !== want) {
      throw new OrcDecodeError(`type ${id} (${TypeKind[t.kind]}) has ${children.length} subtypes, expected ${want}`);
    }
    if (t.kind === TypeKind.STRUCT && t.fieldNames.length !== children.length) {
      throw new OrcDecodeError(`struct type ${id} has ${children.length} subtypes but ${t.fieldNames.length} field names`);
    }
    return {
      id,
      kind: t.kind,
      maxId,
      children,
      fieldNames: t.fieldNames,
      maximumLength: t.maximumLength,
      precision: t.precision,
      scale: t.scale,
      attributes: t.attributes,
    };
  };
  return build(0, 0);
}

/** Name of the extra last branch of a union's Arrow type that null union values point at. */
export const UNION_NULL_BRANCH = 'null';

/** Precision and scale of a decimal node, with the Hive 0.11 defaults when the file has none. */
export function decimalShape(node: OrcTypeNode): { precision: number; scale: number; hive11: boolean } {
  return node.precision === 0
    ? { precision: HIVE11_DECIMAL_PRECISION, scale: HIVE11_DECIMAL_SCALE, hive11: true }
    : { precision: node.precision, scale: node.scale, hive11: false };
}

/** The Arrow type of a node. */
export function arrowType(node: OrcTypeNode): arrow.DataType {
  switch (node.kind) {
    case TypeKind.BOOLEAN:
      return new arrow.Bool();
    case TypeKind.BYTE:
      return new arrow.Int8();
    case TypeKind.SHORT:
      return new arrow.Int16();
    case TypeKind.INT:
      return new arrow.Int32();
    case TypeKind.LONG:
      return new arrow.Int64();
    case TypeKind.FLOAT:
      return new arrow.Float32();
    case TypeKind.DOUBLE:
      return new arrow.Float64();
    case TypeKind.STRING:
    case TypeKind.VARCHAR:
    case TypeKind.CHAR:
      return new arrow.Utf8();
    case TypeKind.BINARY:
      return new arrow.Binary();
    case TypeKind.TIMESTAMP:
      return new arrow.Timestamp(arrow.TimeUnit.NANOSECOND);
    case TypeKind.TIMESTAMP_INSTANT:
      return new arrow.Timestamp(arrow.TimeUnit.NANOSECOND, 'UTC');
    case TypeKind.DECIMAL: {
      const { precision, scale } = decimalShape(node);
      return new arrow.Decimal(scale, precision, 128);
    }
    case TypeKind.DATE:
      return new arrow.DateDay();
    case TypeKind.LIST:
      return new arrow.List(arrowField('element', node.children[0]!));
    case TypeKind.MAP: {
      const entries = new arrow.Struct([arrowField('key', node.children[0]!, false), arrowField('value', node.children[1]!)]);
      return new arrow.Map_(new arrow.Field('entries', entries, false));
    }
    case TypeKind.STRUCT:
      return new arrow.Struct(node.children.map((c, i) => arrowField(node.fieldNames[i]!, c)));
    case TypeKind.UNION: {
      // Arrow unions have no validity of their own: a null union value points at a trailing Null
      // child, so it stays apart from a present union whose chosen branch holds null.
      const branches = node.children.map((c, i) => arrowField(`tag${i}`, c));
      return new arrow.DenseUnion(
        [...branches.keys(), branches.length],
        [...branches, new arrow.Field(UNION_NULL_BRANCH, new arrow.Null(), true)],
      );
    }
  }
}

/** An Arrow field for a node; its ORC type attributes and column id go to the field metadata. */
export function arrowField(name: string, node: OrcTypeNode, nullable = true): arrow.Field {
  const metadata = new Map<string, string>(node.attributes);
  metadata.set('orc.column.id', String(node.id));
  return new arrow.Field(name, arrowType(node), nullable, metadata);
}
