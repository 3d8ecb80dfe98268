/**
 * Paimon's logical data types, as a plain discriminated union.
 *
 * Parsing and printing of Paimon's type JSON lives in `type-json.ts`; mapping to Apache Arrow in
 * `arrow-types.ts`. Every type carries `nullable` because Paimon's ` NOT NULL` suffix is part of
 * the type.
 */
export type DataType =
  AtomicType | DecimalType | CharType | BinaryType | TimeType | TimestampType | ArrayType | MapType | MultisetType | RowType;

/** Type roots without parameters beyond nullability. */
export type AtomicTypeRoot = 'BOOLEAN' | 'TINYINT' | 'SMALLINT' | 'INT' | 'BIGINT' | 'FLOAT' | 'DOUBLE' | 'DATE';

/** A type without parameters (BOOLEAN, INT, STRING, DATE ...). */
export interface AtomicType {
  readonly root: AtomicTypeRoot;
  readonly nullable: boolean;
}

/** DECIMAL(precision, scale). */
export interface DecimalType {
  readonly root: 'DECIMAL';
  readonly nullable: boolean;
  readonly precision: number;
  readonly scale: number;
}

/** CHAR(n) or VARCHAR(n); STRING is VARCHAR(2147483647). */
export interface CharType {
  readonly root: 'CHAR' | 'VARCHAR';
  readonly nullable: boolean;
  readonly length: number;
}

/** BINARY(n) or VARBINARY(n); BYTES is VARBINARY(2147483647). */
export interface BinaryType {
  readonly root: 'BINARY' | 'VARBINARY';
  readonly nullable: boolean;
  readonly length: number;
}

/** TIME(precision). */
export interface TimeType {
  readonly root: 'TIME';
  readonly nullable: boolean;
  readonly precision: number;
}

/** TIMESTAMP(p) or TIMESTAMP(p) WITH LOCAL TIME ZONE (`TIMESTAMP_LTZ`). */
export interface TimestampType {
  readonly root: 'TIMESTAMP' | 'TIMESTAMP_LTZ';
  readonly nullable: boolean;
  readonly precision: number;
}

/** ARRAY<element>. */
export interface ArrayType {
  readonly root: 'ARRAY';
  readonly nullable: boolean;
  readonly element: DataType;
}

/** MAP<key, value>. */
export interface MapType {
  readonly root: 'MAP';
  readonly nullable: boolean;
  readonly key: DataType;
  readonly value: DataType;
}

/** MULTISET<element>. */
export interface MultisetType {
  readonly root: 'MULTISET';
  readonly nullable: boolean;
  readonly element: DataType;
}

/** ROW<fields>: a nested record with its own field ids. */
export interface RowType {
  readonly root: 'ROW';
  readonly nullable: boolean;
  readonly fields: readonly DataField[];
}

/** A column of a schema or a nested ROW field, with its permanent field id. */
export interface DataField {
  readonly id: number;
  readonly name: string;
  readonly type: DataType;
  readonly description?: string;
  readonly defaultValue?: string;
}

/** Max length Paimon uses for STRING / BYTES. */
export const MAX_LENGTH = 2147483647;
