/** Types of table-definitions.mjs (plain JavaScript so that worker processes and benchmarks can load it). */

/** One column as `{ name, type }` (what `TableSpec.fields` and the CLI's `--schema` JSON take). */
export interface Column {
  name: string;
  type: string;
}

/** `columns('k INT NOT NULL', 'v STRING')`: each argument is a column name, a space, and its Paimon type string. */
export declare function columns(...ddl: string[]): Column[];

/** `optionArgs({ bucket: '1' })` = `['--option', 'bucket=1']`: table options as `tidemark create` flags. */
export declare function optionArgs(options: Readonly<Record<string, string>>): string[];
