/**
 * CPU time of processes other than the benchmark's own children, from /proc (Linux): the S3
 * server's daemons (radosgw, ceph-osd, ceph-mon, ceph-mgr) and the whole machine. Used to find out
 * whether a run was bounded by the cores rather than by the store or by the code's waiting.
 *
 * Everything here returns null where /proc is not there (not Linux): the report then says so.
 */
import { readFile, readdir } from 'node:fs/promises';

/** Linux reports process and machine CPU in clock ticks; USER_HZ is 100 on every mainstream build. */
const TICK_MS = 10;

/** Process names of the Ceph daemons that serve the S3 API (the test server runs one of each). */
export const SERVER_DAEMONS = ['radosgw', 'ceph-osd', 'ceph-mon', 'ceph-mgr'];

/** utime + stime of one process (all its threads) in ms, or null when it is gone. */
async function processCpuMs(pid) {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/**
 * The running processes named in `names`, each with its CPU time so far:
 * `[{ pid, name, cpuMs }]`, or null without /proc.
 */
export async function daemonCpu(names = SERVER_DAEMONS) {
  let pids;
  try {
    pids = (await readdir('/proc')).filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  const out = [];
  for (const pid of pids) {
    let name;
    try {
      name = (await readFile(`/proc/${pid}/comm`, 'utf8')).trim();
    } catch {
      continue; // exited while we looked
    }
    if (!names.includes(name)) continue;
    const cpuMs = await processCpuMs(pid);
    if (cpuMs !== null) out.push({ pid: Number(pid), name, cpuMs });
  }
  return out;
}

/** Busy and idle ms of all cores together so far (the first line of /proc/stat), or null. */
export async function machineCpu() {
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already inside user).
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    const busy = (v[0] ?? 0) + (v[1] ?? 0) + (v[2] ?? 0) + (v[5] ?? 0) + (v[6] ?? 0) + (v[7] ?? 0);
    return { busyMs: busy * TICK_MS, idleMs: idle * TICK_MS };
  } catch {
    return null;
  }
}

/**
 * Starts measuring: `stop()` returns the CPU ms each daemon (by name, summed over its processes)
 * and the whole machine used in between, plus the wall ms. Daemons that started or stopped in
 * between count only while both samples saw them.
 */
export async function cpuWindow(names = SERVER_DAEMONS) {
  const [d0, m0] = await Promise.all([daemonCpu(names), machineCpu()]);
  const t0 = performance.now();
  return {
    async stop() {
      const [d1, m1] = await Promise.all([daemonCpu(names), machineCpu()]);
      const wallMs = performance.now() - t0;
      let daemons = null;
      if (d0 !== null && d1 !== null) {
        daemons = {};
        for (const p of d1) {
          const before = d0.find((q) => q.pid === p.pid);
          if (before === undefined) continue;
          const cur = daemons[p.name] ?? { processes: 0, cpuMs: 0 };
          daemons[p.name] = { processes: cur.processes + 1, cpuMs: cur.cpuMs + (p.cpuMs - before.cpuMs) };
        }
      }
      const machine = m0 !== null && m1 !== null ? { busyMs: m1.busyMs - m0.busyMs, idleMs: m1.idleMs - m0.idleMs } : null;
      return { wallMs, daemons, machine };
    },
  };
}
