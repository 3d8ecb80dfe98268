// Headless Chromium for the HTML report test, shared by scripts/test.mjs and the test itself:
// find the browser, or install Debian's `chromium` package with apt-get the way the S3 server's
// packages are installed (root, or passwordless sudo). An install takes 15-30 s on a warm apt
// cache; an installed browser is reused, so only the first run pays.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { aptGet } from '../support/apt-get.mjs';

/** Where the browser is looked for, in order, after $CHROMIUM_PATH. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Chromium executable: $CHROMIUM_PATH when set (and executable), else the first installed candidate. */
export function findChromium(env = process.env) {
  if (env.CHROMIUM_PATH) return executable(env.CHROMIUM_PATH) ? env.CHROMIUM_PATH : undefined;
  return CANDIDATES.find(executable);
}

/**
 * Returns the Chromium executable, installing Debian's `chromium` package when it is missing.
 * Tries the install from the current package lists first and runs `apt-get update` only if that
 * fails. Returns undefined when the install is impossible (no apt-get, no root or sudo, offline).
 */
export function ensureChromium(log = (msg) => console.log(msg)) {
  const found = findChromium();
  if (found) {
    log(`chromium is installed: ${found}`);
    return found;
  }
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) {
    log('chromium is missing and apt-get is not available to install it');
    return undefined;
  }
  log('installing chromium with apt-get for the HTML report test (about 15-30 s once the packages are downloaded)');
  const install = ['install', '-y', '-qq', '--no-install-recommends', 'chromium'];
  if (!aptGet(install, log)) {
    aptGet(['update', '-qq'], log);
    aptGet(install, log);
  }
  return findChromium();
}
