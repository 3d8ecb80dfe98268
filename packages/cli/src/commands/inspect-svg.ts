/**
 * Hand-written SVG charts for the HTML table report. Each chart is a string of inline SVG; every mark
 * carries a class naming what it stands for (`snapshot`, `bin`, `partition`, `bucket`) and a
 * `<title>` for the browser's tooltip, so the page needs no script.
 */
import type { BucketSkew, FileSizeBin, PartitionReport, TimelineSnapshot } from '@tidemark/maintenance';
import { formatBytes } from '../output/progress.js';
import { counted, formatCount as count } from './inspect-words.js';

/** Colour of each commit kind (colour-blind-safe Tableau 10 hues). */
export const KIND_COLOURS: Readonly<Record<string, string>> = {
  APPEND: '#4e79a7',
  COMPACT: '#59a14f',
  OVERWRITE: '#e15759',
  ANALYZE: '#b07aa1',
};
const REMOVED_COLOUR = '#f28e2b';
const BAR_COLOUR = '#4e79a7';

/** Escapes text for HTML and SVG content and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}

/** A number rounded for coordinates (keeps the SVG small and stable). */
function n(v: number): string {
  return String(Math.round(v * 10) / 10);
}

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

function svg(id: string, width: number, height: number, label: string, body: string): string {
  return (
    `<svg id="${escapeXml(id)}" class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" ` +
    `width="${width}" height="${height}" role="img" aria-label="${escapeXml(label)}">${body}</svg>`
  );
}

function text(x: number, y: number, content: string, attrs = ''): string {
  return `<text x="${n(x)}" y="${n(y)}"${attrs ? ` ${attrs}` : ''}>${escapeXml(content)}</text>`;
}

/**
 * The snapshot timeline: one group per snapshot (class `snapshot`), rows added as a bar above the
 * axis in the colour of the commit kind, rows removed below it. Snapshots are evenly spaced in
 * commit order; ticks give the commit time.
 */
export function timelineChart(snapshots: readonly TimelineSnapshot[]): string {
  const W = 960;
  const H = 260;
  const left = 70;
  const right = 10;
  const top = 16;
  const half = 90;
  const zero = top + half;
  const plotW = W - left - right;
  const max = Math.max(1, ...snapshots.map((s) => Math.max(s.rowsAdded, s.rowsRemoved)));
  const step = snapshots.length === 0 ? plotW : plotW / snapshots.length;
  const barW = Math.max(1, step > 4 ? Math.min(48, step * 0.8) : step);
  const parts: string[] = [];
  parts.push(`<line class="axis" x1="${left}" y1="${zero}" x2="${W - right}" y2="${zero}" stroke="#888"/>`);
  parts.push(text(left - 6, top + 10, count(max), 'text-anchor="end"'));
  parts.push(text(left - 6, zero + 4, '0', 'text-anchor="end"'));
  parts.push(text(left - 6, zero + half, `−${count(max)}`, 'text-anchor="end"'));
  parts.push(text(4, top + half / 2, 'rows added', 'class="axis-label"'));
  parts.push(text(4, zero + half / 2, 'removed', 'class="axis-label"'));
  snapshots.forEach((s, i) => {
    const x = left + i * step + (step - barW) / 2;
    const up = (s.rowsAdded / max) * half;
    const down = (s.rowsRemoved / max) * half;
    const title =
      `#${s.id} ${s.kind} ${isoSeconds(s.timeMillis)}\n+${counted(s.rowsAdded, 'row')} in ${counted(s.filesAdded, 'file')} (${formatBytes(s.bytesAdded)})\n` +
      `−${counted(s.rowsRemoved, 'row')} in ${counted(s.filesRemoved, 'file')} (${formatBytes(s.bytesRemoved)})`;
    parts.push(
      `<g class="snapshot" data-id="${s.id}" data-kind="${escapeXml(s.kind)}"><title>${escapeXml(title)}</title>` +
        `<rect class="added" x="${n(x)}" y="${n(zero - up)}" width="${n(barW)}" height="${n(up)}" fill="${KIND_COLOURS[s.kind] ?? '#999'}"/>` +
        `<rect class="removed" x="${n(x)}" y="${zero}" width="${n(barW)}" height="${n(down)}" fill="${REMOVED_COLOUR}"/></g>`,
    );
  });
  // Up to five ticks (id and commit time), far enough apart that their labels never overlap.
  const xOf = (i: number): number => left + i * step + step / 2;
  const ticks: number[] = [];
  const wanted = Math.min(5, snapshots.length);
  for (let t = 0; t < wanted; t++) {
    const i = wanted === 1 ? 0 : Math.round((t * (snapshots.length - 1)) / (wanted - 1));
    if (ticks.length === 0 || xOf(i) - xOf(ticks[ticks.length - 1]!) >= 190) ticks.push(i);
    else if (t === wanted - 1 && ticks.length > 1) ticks[ticks.length - 1] = i; // keep the newest snapshot
  }
  ticks.forEach((i, t) => {
    const s = snapshots[i]!;
    const anchor = t === 0 ? 'start' : t === ticks.length - 1 ? 'end' : 'middle';
    const x = anchor === 'start' ? left + i * step : anchor === 'end' ? left + (i + 1) * step : xOf(i);
    parts.push(text(x, H - 26, `#${s.id}`, `text-anchor="${anchor}"`));
    parts.push(text(x, H - 10, isoSeconds(s.timeMillis).replace('T', ' '), `text-anchor="${anchor}" class="tick"`));
  });
  return svg('timeline', W, H, `snapshot timeline, ${snapshots.length} snapshots`, parts.join(''));
}

/** Short label of a size bin. */
export function binLabel(bin: FileSizeBin): string {
  // Bins are contiguous, so the upper edge names each one (as on the terminal).
  return bin.maxBytes === null ? `≥ ${formatBytes(bin.minBytes)}` : `< ${formatBytes(bin.maxBytes)}`;
}

/**
 * A histogram of file counts per size bin (class `bin`), with a dashed line at `target-file-size`.
 *
 * @param id - the element id (one chart per partition).
 */
export function histogramChart(id: string, bins: readonly FileSizeBin[], counts: readonly number[], small = false): string {
  const W = small ? 300 : 720;
  const H = small ? 130 : 230;
  const left = small ? 8 : 40;
  const bottom = small ? 20 : 36;
  const top = 16;
  const plotW = W - left - 8;
  const plotH = H - top - bottom;
  const max = Math.max(1, ...counts);
  const step = plotW / bins.length;
  const parts: string[] = [];
  bins.forEach((b, i) => {
    const c = counts[i] ?? 0;
    const h = (c / max) * plotH;
    const x = left + i * step + step * 0.1;
    const range = b.maxBytes === null ? `≥ ${formatBytes(b.minBytes)}` : `${formatBytes(b.minBytes)} – ${formatBytes(b.maxBytes)}`;
    parts.push(
      `<rect class="bin" data-count="${c}" x="${n(x)}" y="${n(top + plotH - h)}" width="${n(step * 0.8)}" height="${n(h)}" fill="${BAR_COLOUR}">` +
        `<title>${escapeXml(`${range}: ${counted(c, 'file')}`)}</title></rect>`,
    );
    if (c > 0) parts.push(text(x + step * 0.4, top + plotH - h - 3, count(c), 'text-anchor="middle" class="value"'));
    if (!small) parts.push(text(x + step * 0.4, H - bottom + 16, binLabel(b), 'text-anchor="middle" class="tick"'));
  });
  const targetIndex = bins.findIndex((b) => b.minFraction === 1);
  if (targetIndex > 0) {
    const x = left + targetIndex * step;
    parts.push(
      `<line class="target" x1="${n(x)}" y1="${top - 6}" x2="${n(x)}" y2="${top + plotH}" stroke="#e15759" stroke-dasharray="4 3"/>`,
    );
    parts.push(text(x + 3, top - 4, small ? 'target' : 'target-file-size', 'class="tick"'));
  }
  parts.push(`<line class="axis" x1="${left}" y1="${top + plotH}" x2="${W - 8}" y2="${top + plotH}" stroke="#888"/>`);
  return svg(id, W, H, `data-file sizes, ${bins.length} bins`, parts.join(''));
}

/** Horizontal bars of the largest partitions by bytes (class `partition`). */
export function partitionsChart(partitions: readonly PartitionReport[]): string {
  const W = 960;
  const row = 22;
  const H = Math.max(1, partitions.length) * row + 8;
  const labelW = 260;
  const plotW = W - labelW - 190;
  const max = Math.max(1, ...partitions.map((p) => p.bytes));
  const parts = partitions.map((p, i) => {
    const y = 4 + i * row;
    const w = Math.max(1, (p.bytes / max) * plotW);
    const label = p.path === '' ? '(unpartitioned)' : p.path.replace(/\/$/, '');
    const shown = [...label].length > 40 ? [...label].slice(0, 39).join('') + '…' : label;
    const figures = `${formatBytes(p.bytes)} · ${counted(p.files, 'file')} · ${counted(p.rows, 'row')}`;
    return (
      `<g class="partition-row">${text(labelW - 6, y + 15, shown, 'text-anchor="end"')}` +
      `<rect class="partition" x="${labelW}" y="${y + 3}" width="${n(w)}" height="${row - 6}" fill="${BAR_COLOUR}">` +
      `<title>${escapeXml(`${label}: ${figures}, ${count(p.smallFiles)} small`)}</title></rect>` +
      `${text(labelW + w + 6, y + 15, figures, 'class="value"')}</g>`
    );
  });
  return svg('partitions', W, H, `largest partitions, ${partitions.length} shown`, parts.join(''));
}

/** Bytes per bucket of one partition (class `bucket`), with the mean as a dashed line. */
export function bucketChart(id: string, skew: BucketSkew): string {
  const W = 960;
  const H = 170;
  const left = 60;
  const top = 14;
  const bottom = 24;
  const plotW = W - left - 10;
  const plotH = H - top - bottom;
  const max = Math.max(1, ...skew.sizes.map((b) => b.bytes));
  const step = plotW / Math.max(1, skew.sizes.length);
  const barW = Math.max(1, Math.min(60, step * 0.8));
  const parts: string[] = [];
  skew.sizes.forEach((b, i) => {
    const h = (b.bytes / max) * plotH;
    const x = left + i * step + (step - barW) / 2;
    parts.push(
      `<rect class="bucket" data-bucket="${b.bucket}" x="${n(x)}" y="${n(top + plotH - h)}" width="${n(barW)}" height="${n(h)}" fill="${BAR_COLOUR}">` +
        `<title>${escapeXml(`bucket ${b.bucket}: ${formatBytes(b.bytes)}, ${counted(b.files, 'file')}, ${counted(b.rows, 'row')}`)}</title></rect>`,
    );
    if (skew.sizes.length <= 32) parts.push(text(x + barW / 2, H - 8, String(b.bucket), 'text-anchor="middle" class="tick"'));
  });
  const y = top + plotH - (skew.meanBytes / max) * plotH;
  parts.push(`<line class="mean" x1="${left}" y1="${n(y)}" x2="${W - 10}" y2="${n(y)}" stroke="#e15759" stroke-dasharray="4 3"/>`);
  parts.push(text(left - 6, top + 8, formatBytes(max), 'text-anchor="end" class="tick"'));
  return svg(id, W, H, `bytes per bucket, ${counted(skew.sizes.length, 'bucket')}`, parts.join(''));
}
