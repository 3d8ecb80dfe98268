/**
 * A small, strict command-line parser. Each command declares its options and positional
 * arguments once ({@link CommandUsage}); the same declaration types the parsed result and
 * renders the `--help` text, so the two never drift apart.
 *
 * Strict means: unknown options, missing values, repeated single-valued options, malformed
 * integers, values outside `choices`, conflicting options and missing or surplus positional
 * arguments all raise {@link UsageError} (exit code 2), naming the option.
 */
import { editDistance } from '@tidemark/core';
import { UsageError } from './errors.js';

/**
 * Kinds of option values: `boolean` flags take no value; `string` and `integer` take one;
 * `list` takes one comma-separated value (`--columns a,b`); `multiple` may be repeated
 * (`--option k=v --option k2=v2`) and collects every value in order.
 */
export type OptionKind = 'boolean' | 'string' | 'integer' | 'list' | 'multiple';

/** Declaration of one `--long` option. */
export interface OptionSpec {
  readonly type: OptionKind;
  /** One line for `--help`. */
  readonly description: string;
  /** Placeholder shown in help, e.g. `N` in `--limit <N>`. */
  readonly valueName?: string;
  /** Single-letter alias, without the dash. */
  readonly short?: string;
  /** For `integer`: smallest accepted value. */
  readonly min?: number;
  /** For `string`: the only accepted values. */
  readonly choices?: readonly string[];
}

/** Option declarations of one command, keyed by the long name without dashes. */
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** Declaration of one positional argument. */
export interface PositionalSpec {
  readonly name: string;
  readonly description: string;
  /** Defaults to true. */
  readonly required?: boolean;
  /** Takes every remaining argument; only valid for the last positional. */
  readonly variadic?: boolean;
}

/** Everything the parser and the help text need to know about a command's command line. */
export interface CommandUsage<S extends OptionSpecs = OptionSpecs> {
  /** Synopsis lines without the leading `tidemark `, e.g. `read <table> [--limit N]`. */
  readonly synopsis: readonly string[];
  /** A paragraph shown under the synopsis in `--help`. */
  readonly description?: string;
  readonly positionals: readonly PositionalSpec[];
  readonly options: S;
  /** Groups of options of which at most one may be given, e.g. `[['snapshot', 'tag', 'timestamp']]`. */
  readonly conflicts?: readonly (readonly string[])[];
  /** `{ a: 'b' }` means `--a` may only be given together with `--b`. */
  readonly requires?: Readonly<Record<string, string>>;
}

/** The parsed value type of one option declaration. */
export type OptionValue<O extends OptionSpec> = O['type'] extends 'boolean'
  ? boolean
  : O['type'] extends 'integer'
    ? number | undefined
    : O['type'] extends 'list' | 'multiple'
      ? string[]
      : string | undefined;

/** Result of {@link parseArgs}: typed options plus the positional arguments in order. */
export interface ParsedArgs<S extends OptionSpecs = OptionSpecs> {
  /** Booleans default to false, lists to `[]`, other options to `undefined`. */
  readonly options: { readonly [K in keyof S]: OptionValue<S[K]> };
  /** Positional arguments in command-line order (variadic ones included). */
  readonly positionals: readonly string[];
  /** Positional arguments by declared name; a variadic one holds its first value (see `positionals`). */
  readonly named: Readonly<Record<string, string | undefined>>;
  /** True when `--help`/`-h` was given; nothing else is validated then. */
  readonly help: boolean;
}

/**
 * Parses `argv` (the arguments after the command name) against `usage`.
 *
 * @param command - the command name, used in error messages and to pick the usage to print.
 * @throws UsageError for anything the declaration does not allow.
 */
export function parseArgs<S extends OptionSpecs>(command: string, usage: CommandUsage<S>, argv: readonly string[]): ParsedArgs<S> {
  if (argv.some((a, i) => (a === '--help' || a === '-h') && !argv.slice(0, i).includes('--'))) {
    return { options: defaults(usage.options), positionals: [], named: {}, help: true };
  }
  const values: Record<string, unknown> = defaults(usage.options);
  const seen = new Set<string>();
  const positionals: string[] = [];
  const fail = (message: string): never => {
    throw new UsageError(message, command);
  };
  const shortToLong = new Map<string, string>();
  for (const [name, spec] of Object.entries(usage.options)) if (spec.short) shortToLong.set(spec.short, name);

  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string;
    let inline: string | undefined;
    if (token.startsWith('--')) {
      const eq = token.indexOf('=');
      name = eq < 0 ? token.slice(2) : token.slice(2, eq);
      inline = eq < 0 ? undefined : token.slice(eq + 1);
      if (!Object.hasOwn(usage.options, name)) fail(`unknown option '--${name}'${suggest(name, Object.keys(usage.options))}`);
    } else if (token.length > 1 && token.startsWith('-') && !/^-\d/.test(token)) {
      const long = shortToLong.get(token.slice(1, 2));
      if (!long || token.length > 2) fail(`unknown option '${token}'`);
      name = long!;
    } else {
      positionals.push(token);
      continue;
    }
    const spec = usage.options[name]!;
    const flag = `--${name}`;
    if (spec.type === 'boolean') {
      if (inline !== undefined) fail(`option '${flag}' takes no value`);
      if (seen.has(name)) fail(`option '${flag}' is given more than once`);
      seen.add(name);
      values[name] = true;
      continue;
    }
    let raw = inline;
    if (raw === undefined) {
      const next = argv[i + 1];
      // A value may look like '-' (stdin) or '-5', but never like another long option.
      if (next === undefined || next.startsWith('--'))
        fail(`option '${flag}' needs a value${spec.valueName ? ` <${spec.valueName}>` : ''}`);
      raw = next!;
      i++;
    }
    if (spec.type !== 'multiple' && seen.has(name)) fail(`option '${flag}' is given more than once`);
    seen.add(name);
    values[name] = convert(flag, spec, raw!, values[name], fail);
  }

  for (const group of usage.conflicts ?? []) {
    const given = group.filter((n) => seen.has(n));
    if (given.length > 1) fail(`options ${given.map((n) => `'--${n}'`).join(' and ')} cannot be used together`);
  }
  for (const [name, needed] of Object.entries(usage.requires ?? {})) {
    if (seen.has(name) && !seen.has(needed)) fail(`option '--${name}' requires '--${needed}'`);
  }

  const named: Record<string, string | undefined> = {};
  let p = 0;
  for (const spec of usage.positionals) {
    const value = positionals[p];
    if (value === undefined) {
      if (spec.required !== false) fail(`missing argument <${spec.name}>`);
    } else {
      named[spec.name] = value;
    }
    p = spec.variadic ? positionals.length : p + 1;
  }
  if (p < positionals.length) fail(`unexpected argument '${positionals[p]!}'`);

  return { options: values as ParsedArgs<S>['options'], positionals, named, help: false };
}

function defaults<S extends OptionSpecs>(specs: S): ParsedArgs<S>['options'] & Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    out[name] = spec.type === 'boolean' ? false : spec.type === 'list' || spec.type === 'multiple' ? [] : undefined;
  }
  return out as ParsedArgs<S>['options'] & Record<string, unknown>;
}

function convert(flag: string, spec: OptionSpec, raw: string, previous: unknown, fail: (m: string) => never): unknown {
  switch (spec.type) {
    case 'integer': {
      if (!/^-?\d+$/.test(raw)) fail(`option '${flag}' needs an integer, got '${raw}'`);
      const n = Number(raw);
      if (!Number.isSafeInteger(n)) fail(`option '${flag}' is out of range: ${raw}`);
      if (spec.min !== undefined && n < spec.min) fail(`option '${flag}' must be at least ${spec.min}, got ${raw}`);
      return n;
    }
    case 'list': {
      const items = raw.split(',').map((s) => s.trim());
      if (items.some((s) => s === '')) fail(`option '${flag}' has an empty item in '${raw}'`);
      return items;
    }
    case 'multiple':
      return [...(previous as string[]), raw];
    default:
      if (raw === '') fail(`option '${flag}' needs a non-empty value`);
      if (spec.choices && !spec.choices.includes(raw)) fail(`option '${flag}' must be one of ${spec.choices.join(', ')}; got '${raw}'`);
      return raw;
  }
}

function suggest(name: string, candidates: readonly string[]): string {
  const best = closest(name, candidates);
  return best ? ` (did you mean '--${best}'?)` : '';
}

/** The candidate within edit distance 2 of `name`, if any (for "did you mean" hints). */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const c of candidates) {
    const d = editDistance(name, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** Renders the `--help` text of a command from its declaration. */
/**
 * What a usage error prints under its message: the synopsis and where the rest is, not the whole
 * help (a mistyped flag should not bury its one-line error under every option).
 */
export function formatShortUsage(command: string, usage: CommandUsage): string {
  const lines = usage.synopsis.map((s, i) => `${i === 0 ? 'Usage:' : '      '} tidemark ${s}`);
  lines.push(`Run 'tidemark ${command} --help' for every option.`);
  return lines.join('\n') + '\n';
}

export function formatUsage(summary: string, usage: CommandUsage): string {
  const lines: string[] = [];
  usage.synopsis.forEach((s, i) => lines.push(`${i === 0 ? 'Usage:' : '      '} tidemark ${s}`));
  lines.push('', summary);
  if (usage.description) lines.push('', usage.description);
  const rows: [string, string][] = [];
  if (usage.positionals.length > 0) {
    lines.push('', 'Arguments:');
    const width = Math.max(...usage.positionals.map((p) => p.name.length + 2));
    for (const p of usage.positionals) lines.push(`  ${`<${p.name}>`.padEnd(width)}  ${p.description}`);
  }
  for (const [name, spec] of Object.entries(usage.options)) {
    const value = spec.type === 'boolean' ? '' : ` <${spec.valueName ?? 'value'}>`;
    const extra = spec.type === 'multiple' ? ' (repeatable)' : spec.choices ? ` (${spec.choices.join('|')})` : '';
    rows.push([`${spec.short ? `-${spec.short}, ` : ''}--${name}${value}`, spec.description + extra]);
  }
  rows.push(['-h, --help', 'show this help']);
  const width = Math.max(...rows.map((r) => r[0].length));
  lines.push('', 'Options:');
  for (const [left, right] of rows) lines.push(`  ${left.padEnd(width)}  ${right}`);
  return lines.join('\n') + '\n';
}
