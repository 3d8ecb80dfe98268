/**
 * Where a process's CPU goes, by phase of the work: the main thread's CPU (Linux
 * `/proc/self/task/<pid>/stat`) split by a V8 sampling profile of the same window, each sample
 * given to the phase of the nearest frame on its stack that a phase table names; CPU of the other
 * threads (encode workers, GC helpers, libuv) is the process's total minus the main thread's.
 *
 * Self-time shares of a profile stay meaningful on a loaded machine (a descheduled thread is
 * sampled where it stands), so shares × measured main-thread CPU give CPU ms per phase.
 */
import { readdir, readFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import path from 'node:path';

/** Linux reports thread CPU in clock ticks; USER_HZ is 100 on every mainstream build. */
const TICK_MS = 10;

/** CPU ms of one thread of this process so far, or null when it is gone (or without /proc). */
async function threadCpuMs(tid) {
  try {
    const stat = await readFile(`/proc/self/task/${tid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/** CPU ms of this process's main thread so far, or null without /proc. */
export function mainThreadCpuMs() {
  return threadCpuMs(process.pid);
}

/** CPU ms of every live thread of this process (thread id → ms), or null without /proc. */
export async function threadCpu() {
  try {
    const out = new Map();
    for (const tid of await readdir('/proc/self/task')) {
      const ms = await threadCpuMs(tid);
      if (ms !== null) out.set(Number(tid), ms);
    }
    return out;
  } catch {
    return null;
  }
}

/**
 * CPU ms between two {@link threadCpu} snapshots: of the main thread, of the threads started in
 * between (worker threads such as the encode pool's, when it starts in the window), and of the
 * threads that were there before (V8's platform threads: GC and compiler helpers; libuv's pool).
 */
export function threadCpuSplit(before, after) {
  if (before === null || after === null) return null;
  let mainMs = 0;
  let newThreadsMs = 0;
  let oldThreadsMs = 0;
  for (const [tid, ms] of after) {
    if (tid === process.pid) mainMs = ms - (before.get(tid) ?? 0);
    else if (before.has(tid)) oldThreadsMs += ms - before.get(tid);
    else newThreadsMs += ms;
  }
  return { mainMs, newThreadsMs, oldThreadsMs };
}

/** CPU ms of the whole process so far (all threads). */
export function processCpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Runs `fn` under the sampling profiler and returns its result with `phases`: CPU ms per phase
 * (main thread, by the profile's shares), `otherTop` (the functions whose samples no phase
 * claims, with their CPU ms), `offMainMs` (other threads), `mainMs`, `totalMs`.
 *
 * @param {() => Promise<T>} fn
 * @param {Array<[string, RegExp]>} table phase name and a pattern matched against `function@file`
 *   of each frame (its script URL); the nearest matching frame above a sample decides its phase
 * @template T
 */
export async function profilePhases(fn, table) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  const cpu0 = processCpuMs();
  const main0 = await mainThreadCpuMs();
  await session.post('Profiler.start');
  let result;
  let profile;
  try {
    result = await fn();
  } finally {
    ({ profile } = await session.post('Profiler.stop'));
    session.disconnect();
  }
  const main1 = await mainThreadCpuMs();
  const totalMs = processCpuMs() - cpu0;
  const mainMs = main0 === null || main1 === null ? null : main1 - main0;
  const { shares, other } = phaseShares(profile, table);
  const ms = (share) => (mainMs === null ? null : share * mainMs);
  const phases = {};
  for (const [phase, share] of Object.entries(shares)) phases[phase] = ms(share);
  const otherTop = other.map((o) => ({ fn: o.fn, ms: ms(o.share) }));
  return { result, phases, otherTop, mainMs, offMainMs: mainMs === null ? null : totalMs - mainMs, totalMs };
}

/** Share of the profile's busy (non-idle) samples per phase. */
function phaseShares(profile, table) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const phaseOfNode = new Map();
  const phaseOf = (id) => {
    const known = phaseOfNode.get(id);
    if (known !== undefined) return known;
    const cf = nodes.get(id).callFrame;
    let phase;
    if (cf.functionName === '(garbage collector)') phase = 'gc';
    else if (cf.functionName === '(program)') phase = 'vm';
    else if (cf.functionName === '(idle)') phase = 'idle';
    else {
      const key = `${cf.functionName}@${cf.url}`;
      phase = table.find(([, re]) => re.test(key))?.[0];
      if (phase === undefined) phase = parent.has(id) ? phaseOf(parent.get(id)) : 'other';
    }
    phaseOfNode.set(id, phase);
    return phase;
  };
  const us = new Map();
  /** Self time of the functions whose samples no phase claims, by the frame that ran. */
  const unclaimed = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    const phase = phaseOf(id);
    const dt = profile.timeDeltas[i] ?? 0;
    us.set(phase, (us.get(phase) ?? 0) + dt);
    if (phase === 'other') {
      const cf = nodes.get(id).callFrame;
      const name = `${cf.functionName || '(anonymous)'} ${path.basename(cf.url)}:${cf.lineNumber + 1}`;
      unclaimed.set(name, (unclaimed.get(name) ?? 0) + dt);
    }
  }
  us.delete('idle');
  let busy = 0;
  for (const v of us.values()) busy += v;
  const shares = {};
  for (const [phase, v] of us) shares[phase] = busy > 0 ? v / busy : 0;
  const other = [...unclaimed]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([fn, v]) => ({ fn, share: busy > 0 ? v / busy : 0 }));
  return { shares, other };
}
