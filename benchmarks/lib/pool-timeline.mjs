/**
 * A timeline of the Parquet worker pool and the main thread during one run, to find where a core
 * sits idle. Records, per pool job: when it was queued (the pool's `submit`), when it was posted to
 * which worker, and when it ran there (the worker's own clock, from the `ran` field of its reply);
 * per FileIO read: when it was in flight; on the main thread: its event-loop utilisation and the
 * spans it was blocked (a 1 ms timer firing late by more than 2 ms), plus the phases a caller marks.
 *
 * Instrumentation only: it patches the pool's prototype and `Worker#postMessage` of this process
 * (the benchmark child) and fails loudly when the pool's internals it relies on are gone.
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

const now = () => performance.timeOrigin + performance.now();

/**
 * Starts recording. `Pool` is @tidemark/format's ParquetWorkerPool class.
 * @returns {{ wrapIO: (io: object) => object, mark: (phase: string) => void, stop: () => object }}
 */
export function startPoolTimeline(Pool) {
  const proto = Pool.prototype;
  for (const m of ['submit', 'spawn']) {
    if (typeof proto[m] !== 'function')
      throw new Error(`pool-timeline: ParquetWorkerPool#${m} is gone; update benchmarks/lib/pool-timeline.mjs`);
  }
  const t0 = now();
  const jobs = new Map(); // id -> { kind, queued, posted, worker, ran, received }
  const reads = [];
  const phases = [];
  const blocked = [];
  const elu0 = performance.eventLoopUtilization();

  const origSubmit = proto.submit;
  proto.submit = function (message, ...rest) {
    const id = this.nextId;
    jobs.set(id, { id, kind: message.kind === 'decode' ? 'decode' : 'encode', queued: now() });
    return origSubmit.call(this, message, ...rest);
  };
  const origPost = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (msg, ...rest) {
    const job = msg && typeof msg.id === 'number' && msg.kind !== 'read-reply' ? jobs.get(msg.id) : undefined;
    if (job && job.posted === undefined) {
      job.posted = now();
      job.worker = this.threadId;
    }
    return origPost.call(this, msg, ...rest);
  };
  const origSpawn = proto.spawn;
  proto.spawn = function (...args) {
    const slot = origSpawn.apply(this, args);
    slot.worker.on('message', (reply) => {
      const job = reply && reply.kind !== 'read' ? jobs.get(reply.id) : undefined;
      if (job) {
        job.received = now();
        job.ran = reply.ran;
      }
    });
    // Adding a listener refs the worker's port again; the pool keeps idle workers unref'd.
    if (slot.job === undefined) slot.worker.unref();
    return slot;
  };

  let last = now();
  const sampler = setInterval(() => {
    const t = now();
    if (t - last > 3) blocked.push([last, t]);
    last = t;
  }, 1);
  sampler.unref();

  return {
    /** A FileIO whose reads (read, readRange) are recorded. */
    wrapIO(io) {
      return new Proxy(io, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver);
          if ((prop === 'read' || prop === 'readRange') && typeof v === 'function') {
            return async (...a) => {
              const r = { start: now() };
              reads.push(r);
              try {
                return await v.apply(target, a);
              } finally {
                r.end = now();
              }
            };
          }
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
    },
    mark(phase) {
      if (phases.at(-1)?.phase !== phase) phases.push({ phase, at: now() });
    },
    stop() {
      const t1 = now();
      clearInterval(sampler);
      proto.submit = origSubmit;
      proto.spawn = origSpawn;
      Worker.prototype.postMessage = origPost;
      const elu = performance.eventLoopUtilization(elu0);
      return summarize({ t0, t1, jobs: [...jobs.values()], reads, phases, blocked, mainBusy: elu.utilization });
    },
  };
}

/** Length of the union of intervals clipped to [a, b]. */
function covered(intervals, a, b) {
  const xs = intervals
    .map(([s, e]) => [Math.max(s, a), Math.min(e, b)])
    .filter(([s, e]) => e > s)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let end = -Infinity;
  for (const [s, e] of xs) {
    if (e <= end) continue;
    total += e - Math.max(s, end);
    end = e;
  }
  return total;
}

const r1 = (x) => Math.round(x * 10) / 10;

/**
 * The summary: busy % of each worker (over the rewrite, from its first job to the last job's
 * end) and of the main thread, the tail after the last decode, idle time by cause, and the
 * longest idle gaps with what ended them.
 */
function summarize({ t0, t1, jobs, reads, phases, blocked, mainBusy }) {
  const done = jobs.filter((j) => j.ran !== undefined);
  const rel = (t) => r1(t - t0);
  const phaseSpans = phases.map((p, i) => ({ phase: p.phase, startMs: rel(p.at), ms: r1((phases[i + 1]?.at ?? t1) - p.at) }));
  if (done.length === 0) return { wallMs: r1(t1 - t0), phases: phaseSpans, jobs: 0 };
  const first = Math.min(...done.map((j) => j.queued));
  const end = Math.max(...done.map((j) => j.ran[1]));
  const span = end - first;
  const workers = [...new Set(done.map((j) => j.worker))];
  const decodes = done.filter((j) => j.kind === 'decode');
  const encodes = done.filter((j) => j.kind === 'encode');
  const lastDecodeEnd = decodes.length ? Math.max(...decodes.map((j) => j.ran[1])) : first;
  const readIntervals = reads.filter((r) => r.end !== undefined).map((r) => [r.start, r.end]);
  const causes = { 'nothing queued (waiting for the main thread to submit)': 0, 'queued, not yet posted': 0, 'after its last job': 0 };
  const gaps = [];
  const perWorker = workers.map((w) => {
    const mine = done.filter((j) => j.worker === w).sort((a, b) => a.ran[0] - b.ran[0]);
    const busy = mine.reduce((s, j) => s + (j.ran[1] - j.ran[0]), 0);
    let free = first;
    for (const j of mine) {
      if (j.ran[0] - free > 0.5) {
        const gap = { worker: w, startMs: rel(free), ms: r1(j.ran[0] - free), next: j.kind };
        // What ended the gap: the job was not queued yet (the main thread had not got to it), or it
        // was queued but waited to be posted / for the worker to pick the message up.
        const starved = Math.max(0, Math.min(j.queued, j.ran[0]) - free);
        causes['nothing queued (waiting for the main thread to submit)'] += starved;
        causes['queued, not yet posted'] += j.ran[0] - free - starved;
        gap.nextQueuedMs = r1(j.queued - free);
        gap.mainBlockedMs = r1(covered(blocked, free, j.ran[0]));
        gap.readsInFlightMs = r1(covered(readIntervals, free, j.ran[0]));
        gaps.push(gap);
      }
      free = j.ran[1];
    }
    causes['after its last job'] += end - free;
    return {
      worker: w,
      jobs: mine.length,
      decodes: mine.filter((j) => j.kind === 'decode').length,
      encodes: mine.filter((j) => j.kind === 'encode').length,
      busyMs: r1(busy),
      busyPct: r1((100 * busy) / span),
    };
  });
  gaps.sort((a, b) => b.ms - a.ms);
  const avg = (xs) => (xs.length ? r1(xs.reduce((s, j) => s + (j.ran[1] - j.ran[0]), 0) / xs.length) : 0);
  const tailEncodes = encodes.filter((j) => j.ran[1] > lastDecodeEnd);
  return {
    wallMs: r1(t1 - t0),
    phases: phaseSpans,
    poolSpanMs: r1(span),
    mainBusyPct: r1(100 * mainBusy),
    mainBlockedMs: r1(covered(blocked, first, end)),
    workers: perWorker,
    decodeJobs: decodes.length,
    decodeAvgMs: avg(decodes),
    encodeJobs: encodes.length,
    encodeAvgMs: avg(encodes),
    firstEncodeQueuedMs: encodes.length ? rel(Math.min(...encodes.map((j) => j.queued))) : null,
    lastDecodeEndMs: rel(lastDecodeEnd),
    tailMs: r1(end - lastDecodeEnd),
    tailEncodeMs: r1(tailEncodes.reduce((s, j) => s + (j.ran[1] - Math.max(j.ran[0], lastDecodeEnd)), 0)),
    readsInFlightMs: r1(covered(readIntervals, first, end)),
    reads: reads.length,
    idleMsByCause: Object.fromEntries(Object.entries(causes).map(([k, v]) => [k, r1(v)])),
    longestGaps: gaps.slice(0, 6),
  };
}

/** A few lines of text for a summary (benchmark output and markdown). */
export function describeTimeline(s) {
  if (!s || !s.workers) return ['(no pool jobs recorded)'];
  const ms = (x) => `${Math.round(x)} ms`;
  const lines = [
    `phases: ${s.phases.map((p) => `${p.phase} ${ms(p.ms)}`).join(', ')}; pool busy span ${ms(s.poolSpanMs)}`,
    `workers busy: ${s.workers.map((w) => `${w.busyPct} % (${w.decodes} decodes, ${w.encodes} encodes)`).join(' / ')}; ` +
      `main thread busy ${s.mainBusyPct} % of the run`,
    `${s.decodeJobs} decode jobs of ${s.decodeAvgMs} ms, ${s.encodeJobs} encode jobs of ${s.encodeAvgMs} ms; first encode queued at ` +
      `${ms(s.firstEncodeQueuedMs ?? 0)}, last decode done at ${ms(s.lastDecodeEndMs)}, then ${ms(s.tailMs)} of encoding only ` +
      `(the workers busy ${Math.round((100 * s.tailEncodeMs) / Math.max(1, s.tailMs * s.workers.length))} % of it)`,
    `the workers idled ${Math.round(100 - s.workers.reduce((t, w) => t + w.busyPct, 0) / s.workers.length)} % of the pool's span; ` +
      `worker idle by cause: ${Object.entries(s.idleMsByCause)
        .map(([k, v]) => `${k} ${ms(v)}`)
        .join('; ')}`,
    `longest gaps: ${s.longestGaps
      .map((g) => {
        const queued = g.nextQueuedMs <= 0 ? 'queued before it' : `queued ${ms(g.nextQueuedMs)} into it`;
        return `${ms(g.ms)} at ${ms(g.startMs)} before a ${g.next} (${queued}; main thread blocked ${ms(g.mainBlockedMs)} of it)`;
      })
      .join('; ')}`,
  ];
  return lines;
}
