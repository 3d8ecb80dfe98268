/**
 * The HTML table report: one self-contained file (inline CSS and SVG, no script, no font, no
 * request of any kind; a Content-Security-Policy forbids them), readable offline and safe to mail
 * around. The report object is embedded as JSON data for tools that want the numbers.
 */
import type { JobNotPlanned, TableReport } from '@tidemark/maintenance';
import { formatBytes, formatDuration } from '../output/progress.js';
import { KIND_COLOURS, bucketChart, escapeXml, histogramChart, partitionsChart, timelineChart } from './inspect-svg.js';
import { bucketsText, counted, formatCount as count, liveRowsText, nothingToMergeText } from './inspect-words.js';

/** Skewed partitions drawn bucket by bucket (the rest are listed in the JSON). */
const SKEW_CHARTS = 3;

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1000px;color:#222;padding:0 12px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.sub{color:#666;margin:0 0 12px;word-break:break-all}
.cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:150px}
.card b{display:block;font-size:18px}.card span{color:#666;font-size:12px}.warn b{color:#b35900}
svg.chart{max-width:100%;height:auto;display:block}svg text{font-size:11px;fill:#333}svg .tick{fill:#666;font-size:10px}
svg .value{font-size:10px;fill:#333}svg .axis-label{fill:#666;font-size:10px}
.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
.grid{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0;border:1px solid #eee;padding:6px}figcaption{font-size:12px;color:#444}
table{border-collapse:collapse}td,th{padding:3px 10px;text-align:left;border-bottom:1px solid #eee}td.num{text-align:right}
.muted{color:#888}
`;

function card(value: string, label: string, warn = false): string {
  return `<div class="card${warn ? ' warn' : ''}"><b>${escapeXml(value)}</b><span>${escapeXml(label)}</span></div>`;
}

function notPlanned(j: JobNotPlanned): string {
  return `<span class="muted">not planned: ${escapeXml(j.reason)}</span>`;
}

/** JSON inside a `<script type="application/json">` block: `<` escaped so no `</script>` can end it early. */
function jsonData(report: TableReport): string {
  return JSON.stringify(report).replace(/</g, '\\u003c');
}

/** Renders `report` as one self-contained HTML page. */
export function renderInspectHtml(report: TableReport): string {
  const t = report.timeline;
  const live = report.liveFiles;
  const fs = report.fileSizes;
  const kind = report.primaryKeys.length > 0 ? `primary-key table (${report.primaryKeys.join(', ')})` : 'append table';
  const partitioning = report.partitionKeys.length > 0 ? `partitioned by ${report.partitionKeys.join(', ')}` : 'unpartitioned';
  const body: string[] = [];

  body.push(`<h1>tidemark inspect</h1><p class="sub">${escapeXml(report.table)}<br>`);
  body.push(
    `${escapeXml(`${kind}, ${partitioning}, bucket ${report.bucket}, schema ${report.schemaId}`)} · report made ${escapeXml(report.generatedAt)}</p>`,
  );
  body.push(
    `<div class="cards">${card(count(t.retained), 'snapshots retained')}${card(count(live.files), 'live data files')}` +
      `${card(formatBytes(live.bytes), 'live data')}${card(liveRowsText(report), 'in live files')}${card(count(live.partitions), 'partitions')}` +
      `${card(bucketsText(report), 'buckets holding files')}` +
      `${card(count(fs.smallFiles), `files below ${formatBytes(Math.round(fs.smallFileBytes))}`, fs.smallFiles > 0)}` +
      `${card(count(report.manifests.count), `manifests, ${formatBytes(report.manifests.bytes)}`)}</div>`,
  );

  const levels = Object.entries(live.levels);
  if (report.primaryKeys.length > 0 && levels.length > 0) {
    body.push(`<p id="levels">Files per LSM level: ${levels.map(([l, n]) => `L${escapeXml(l)} ${count(n)}`).join(' · ')}</p>`);
  }

  // ---- timeline ----
  body.push('<h2>Snapshot timeline</h2>');
  if (t.snapshots.length === 0) {
    body.push('<p class="muted">The table has no snapshots yet.</p>');
  } else {
    const legend = Object.entries(KIND_COLOURS)
      .map(([k, c]) => `<span><i style="background:${c}"></i>${k} ${count(t.byKind[k] ?? 0)}</span>`)
      .join('');
    body.push(`<p class="legend">${legend}<span><i style="background:#f28e2b"></i>rows removed</span></p>`);
    body.push(timelineChart(t.snapshots));
    const omitted = t.omitted > 0 ? ` The ${count(t.omitted)} older retained snapshots are not shown.` : '';
    body.push(
      `<p class="muted">Snapshots #${t.snapshots[0]!.id} to #${t.snapshots[t.snapshots.length - 1]!.id}, oldest left.${omitted}</p>`,
    );
  }
  if (report.tags.length > 0) {
    body.push(`<p>Tags: ${report.tags.map((x) => `${escapeXml(x.name)} → #${x.snapshotId}`).join(', ')}</p>`);
  }

  // ---- file sizes ----
  body.push('<h2>Data-file sizes</h2>');
  body.push(
    `<p>target-file-size ${escapeXml(formatBytes(fs.targetFileSize))}; files below ${escapeXml(formatBytes(Math.round(fs.smallFileBytes)))} ` +
      `(target × compaction.small-file-ratio) are small: ${count(fs.smallFiles)} of ${counted(live.files, 'file')}. ` +
      'Compaction merges them where a bucket holds enough of them (see below).</p>',
  );
  body.push(histogramChart('file-sizes', fs.bins, fs.histogram));
  if (report.partitionKeys.length > 0 && report.largestPartitions.length > 0) {
    body.push('<h2>Largest partitions</h2>');
    body.push(partitionsChart(report.largestPartitions));
    body.push('<p class="muted">File sizes per partition, same bins as above:</p><div class="grid">');
    report.largestPartitions.forEach((p, i) => {
      const label = p.path === '' ? '(unpartitioned)' : p.path.replace(/\/$/, '');
      body.push(
        `<figure class="partition-histogram"><figcaption>${escapeXml(label)}: ${counted(p.files, 'file')}, ${count(p.smallFiles)} small</figcaption>` +
          `${histogramChart(`partition-sizes-${i}`, fs.bins, p.histogram, true)}</figure>`,
      );
    });
    body.push('</div>');
  }

  // ---- buckets ----
  body.push('<h2>Bucket skew</h2>');
  if (report.bucketSkew.length === 0) {
    body.push('<p class="muted">No partition spreads over two or more buckets.</p>');
  } else {
    body.push('<table><tr><th>partition</th><th>buckets</th><th>largest / mean</th><th>largest bucket</th></tr>');
    for (const s of report.bucketSkew) {
      body.push(
        `<tr><td>${escapeXml(s.path === '' ? '(unpartitioned)' : s.path)}</td><td class="num">${s.buckets}</td>` +
          `<td class="num">${s.ratio.toFixed(2)}×</td><td>bucket ${s.largest.bucket}, ${escapeXml(formatBytes(s.largest.bytes))}</td></tr>`,
      );
    }
    body.push('</table>');
    report.bucketSkew.slice(0, SKEW_CHARTS).forEach((s, i) => {
      const label = `${s.path === '' ? 'The table' : s.path}: bytes per bucket (dashed: the mean, ${formatBytes(Math.round(s.meanBytes))})`;
      body.push(`<p>${escapeXml(label)}</p>${bucketChart(`buckets-${i}`, s)}`);
    });
  }

  // ---- manifests ----
  const m = report.manifests;
  body.push('<h2>Manifests</h2>');
  body.push(
    `<div class="cards">${card(count(m.count), 'data manifests')}${card(formatBytes(m.bytes), 'manifest bytes')}` +
      `${card(count(m.entries), 'entries')}${card(count(m.deleteEntries), 'DELETE entries', m.deleteEntries > 0)}` +
      `${card(formatBytes(m.listBytes), 'manifest lists')}</div>`,
  );

  // ---- maintenance ----
  body.push('<h2>What maintenance would do now</h2>');
  const o = report.maintenance;
  if (o === null) {
    body.push('<p class="muted">Not planned (the report was made with --skip-maintenance).</p>');
  } else {
    const rows: string[] = [];
    const e = o.expire;
    rows.push(
      `<tr id="job-expire"><th>expire-snapshots</th><td>${
        e.status !== 'planned'
          ? notPlanned(e)
          : e.snapshots === 0
            ? 'nothing to expire'
            : escapeXml(
                `${counted(e.snapshots, 'snapshot')} (#${e.fromSnapshotId}–#${e.toSnapshotId}), ${counted(e.files, 'file')}, ${formatBytes(e.bytes)}`,
              )
      }${
        e.status === 'planned'
          ? `<br><span class="muted">${escapeXml(
              `snapshot.num-retained.min ${e.retainMin}, .max ${e.retainMax >= 2_147_483_647 ? 'unlimited' : e.retainMax}, ` +
                `snapshot.time-retained ${formatDuration(e.timeRetainedMs)}, snapshot.expire.limit ${e.expireLimit}`,
            )}</span>`
          : ''
      }</td></tr>`,
    );
    const r = o.orphans;
    rows.push(
      `<tr id="job-orphans"><th>remove-orphan-files</th><td>${
        r.status !== 'planned'
          ? notPlanned(r)
          : escapeXml(
              `${counted(r.files, 'file')}, ${formatBytes(r.bytes)} older than ${r.olderThan} (${counted(r.filesScanned, 'object')} listed)`,
            )
      }</td></tr>`,
    );
    const k = o.compaction;
    rows.push(
      `<tr id="job-compact"><th>compact</th><td>${
        k.status !== 'planned'
          ? notPlanned(k)
          : k.files === 0
            ? escapeXml(nothingToMergeText(k, fs.smallFiles))
            : escapeXml(
                `${counted(k.files, 'file')} (${formatBytes(k.bytes)}, ${counted(k.rows, k.mode === 'append' ? 'row' : 'record')}) in ` +
                  `${counted(k.windows, k.mode === 'append' ? 'window' : 'bucket')} over ${counted(k.partitions, 'partition')}` +
                  (k.remainingWindows > 0 ? `; ${counted(k.remainingWindows, 'more window', 'more windows')} in later runs` : ''),
              )
      }</td></tr>`,
    );
    const mm = o.manifests;
    rows.push(
      `<tr id="job-compact-manifests"><th>compact-manifests</th><td>${
        mm.status !== 'planned'
          ? notPlanned(mm)
          : mm.manifestsToMerge === 0
            ? 'nothing to merge'
            : `${counted(mm.manifestsToMerge, 'manifest')} to merge`
      }</td></tr>`,
    );
    body.push(`<table>${rows.join('')}</table>`);
  }

  return (
    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">` +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeXml(`tidemark inspect: ${report.table}`)}</title><style>${CSS}</style></head><body>\n` +
    body.join('\n') +
    `\n<script type="application/json" id="tidemark-report">${jsonData(report)}</script>\n</body></html>\n`
  );
}
