/**
 * Log lines of long-running commands (`ingest`) on stderr, as text for people or, with
 * `--log-format json`, as one JSON object per line for log collectors:
 * `{"time":"2024-05-01T12:00:00.000Z","level":"info","msg":"checkpoint committed","checkpointId":3,…}`
 * (the event's fields after `time`, `level` and `msg`). Secrets in URLs and `key=value` pairs are
 * masked in every line, whatever the format.
 */
import type { Writable } from 'node:stream';

/** The formats of `--log-format`. */
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Values a log event may carry (bigints are written as numbers when exact, else as strings). */
export type LogValue = string | number | bigint | boolean | null | undefined | readonly LogValue[] | { readonly [k: string]: LogValue };
export type LogFields = Readonly<Record<string, LogValue>>;

/** A command's log. */
export interface CommandLog {
  readonly format: LogFormat;
  /**
   * An event. `text` is its line in text format (default: `msg`); `null` prints nothing there
   * (details only a log collector wants).
   */
  info(msg: string, fields?: LogFields, text?: string | null): void;
  /** A warning; in text format `tidemark: warning: <msg>`. */
  warn(msg: string, fields?: LogFields): void;
  /** A failure; in text format `tidemark <command>: <msg>`. */
  error(msg: string, fields?: LogFields): void;
}

const RESERVED = new Set(['time', 'level', 'msg']);

/** A log writing to `stream` in `format`; `command` names the command in text-format errors. */
export function commandLog(stream: Writable, format: LogFormat, command: string, now: () => number = Date.now): CommandLog {
  const json = (level: string, msg: string, fields: LogFields): void => {
    const event: Record<string, unknown> = { time: new Date(now()).toISOString(), level, msg: redactSecrets(msg) };
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) event[RESERVED.has(k) ? `field_${k}` : k] = jsonValue(v);
    stream.write(`${JSON.stringify(event)}\n`);
  };
  return {
    format,
    info(msg, fields = {}, text) {
      if (format === 'json') json('info', msg, fields);
      else if (text !== null) stream.write(`${redactSecrets(text ?? msg)}\n`);
    },
    warn(msg, fields = {}) {
      if (format === 'json') json('warn', msg, fields);
      else stream.write(`tidemark: warning: ${redactSecrets(msg)}\n`);
    },
    error(msg, fields = {}) {
      if (format === 'json') json('error', msg, fields);
      else stream.write(`tidemark ${command}: ${redactSecrets(msg)}\n`);
    },
  };
}

function jsonValue(v: LogValue): unknown {
  if (typeof v === 'string') return redactSecrets(v);
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (Array.isArray(v)) return (v as readonly LogValue[]).map(jsonValue);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v as Record<string, LogValue>).map(([k, x]) => [k, jsonValue(x)]));
  }
  return v;
}

// `scheme://user:password@host`, and `name=value` / `"name":"value"` pairs whose name says secret.
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)[^\s@]+@/gi;
const SECRET_NAME = String.raw`[a-z0-9_.-]*(?:password|passwd|secret|token|credential|signature|api[_-]?key|access[_-]?key)[a-z0-9_.-]*`;
const SECRET_PAIR = new RegExp(String.raw`\b(${SECRET_NAME})(=|"\s*:\s*")([^\s"&,;}]+)`, 'gi');

/**
 * `text` with the secrets it may carry masked as `***`: the password of a URL
 * (`s3://key:secret@host`) and the values of `name=value` and JSON `"name":"value"` pairs whose
 * name says secret, password, token, credential, signature or access key (`X-Amz-Signature=…`).
 */
export function redactSecrets(text: string): string {
  return text.replace(URL_PASSWORD, '$1***@').replace(SECRET_PAIR, (_m, name: string, sep: string) => `${name}${sep}***`);
}
