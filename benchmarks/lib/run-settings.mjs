/**
 * The opening of a benchmark's `run(options)`: what every benchmark reads from its options.
 */

/**
 * `options` with `defaults` filled in for the settings it leaves out (undefined or null), plus
 * `log` (`options.log`, else stderr) for progress lines and `started` (now) for the result's total
 * time. Only the keys of `defaults` are taken from `options`.
 *
 * @template {Record<string, unknown>} T
 * @param {{ log?: (msg: string) => void } & Record<string, unknown>} options
 * @param {T} defaults
 * @returns {T & { log: (msg: string) => void, started: number }}
 */
export function runSettings(options, defaults) {
  const settings = Object.fromEntries(Object.entries(defaults).map(([k, v]) => [k, options[k] ?? v]));
  return { ...settings, log: options.log ?? ((m) => console.error(m)), started: performance.now() };
}
