/** The Chromium executable: $CHROMIUM_PATH when set (and executable), else the first installed candidate. */
export function findChromium(env?: Record<string, string | undefined>): string | undefined;
/** Returns the Chromium executable, installing Debian's `chromium` package when it is missing. */
export function ensureChromium(log?: (msg: string) => void): string | undefined;
