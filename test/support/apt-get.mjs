// apt-get for the test setup's system packages (Chromium, the Kafka broker's librdkafka): as root,
// or through passwordless sudo; quiet, non-interactive. Returns whether it succeeded.
import { spawnSync } from 'node:child_process';

export function aptGet(args, log) {
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const [cmd, ...rest] = [...sudo, 'apt-get', ...args];
  log(`${[cmd, ...rest].join(' ')}`);
  const r = spawnSync(cmd, rest, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  return r.status === 0;
}
