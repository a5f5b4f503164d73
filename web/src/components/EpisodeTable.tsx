/**
 * The run's episodes: filter by ending, sort by any column or metric, click to open.
 * Only the rows in view are rendered, so a run of thousands of episodes scrolls smoothly.
 * Each render is recorded as the User Timing measure `episode-table`.
 */
import { useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { EpisodeRow } from '../api/fragments.js';
import { fmtDuration, fmtMetricValue, titleCase } from '../lib/format.js';
import { metricsOf, numericValue } from '../lib/metrics.js';
import { EPISODE_STATUSES } from '../lib/statuses.js';
import { StatusBadge } from './StatusBadge.js';

const ROW_HEIGHT = 32;
const RECORD_COLUMNS = ['#', 'ending', 'steps', 'task', 'worker', 'duration'];
const OVERSCAN = 8;

type SortKey = 'index' | 'status' | 'steps' | 'durationMs' | 'workerId' | 'task' | `m:${string}`;

interface Column {
  key: SortKey;
  label: string;
  className?: string;
  render(e: EpisodeRow): React.ReactNode;
}

export interface EpisodeTableProps {
  episodes: EpisodeRow[];
  /** Metric columns, in order. */
  metricNames: string[];
  selected: number | null;
  onOpen(index: number): void;
  /** Scroll area height in px. @default 420 */
  height?: number;
}

function sortValue(e: EpisodeRow, key: SortKey): number | string {
  if (key.startsWith('m:')) {
    const v = metricsOf(e.metrics)[key.slice(2)];
    const n = numericValue(v);
    return n ?? (v == null ? Number.NEGATIVE_INFINITY : String(v));
  }
  if (key === 'status') return e.status;
  if (key === 'task') return e.task ?? '';
  return e[key as 'index' | 'steps' | 'durationMs' | 'workerId'] ?? 0;
}

export function EpisodeTable({ episodes, metricNames, selected, onOpen, height = 420 }: EpisodeTableProps) {
  const renderStart = performance.now();
  const [ending, setEnding] = useState<string>('');
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'index', desc: false });
  const [scrollTop, setScrollTop] = useState(0);
  const scroller = useRef<HTMLDivElement>(null);
  const hasTask = useMemo(() => episodes.some((e) => e.task), [episodes]);

  const counts = useMemo(() => {
    const c = new Map<string, number>();
    for (const e of episodes) c.set(e.status, (c.get(e.status) ?? 0) + 1);
    return c;
  }, [episodes]);

  const rows = useMemo(() => {
    const filtered = ending ? episodes.filter((e) => e.status === ending) : episodes.slice();
    const dir = sort.desc ? -1 : 1;
    filtered.sort((a, b) => {
      const va = sortValue(a, sort.key);
      const vb = sortValue(b, sort.key);
      const c = typeof va === 'number' && typeof vb === 'number' ? va - vb : String(va).localeCompare(String(vb));
      return c * dir || a.index - b.index;
    });
    return filtered;
  }, [episodes, ending, sort]);

  const columns = useMemo<Column[]>(
    () => [
      { key: 'index', label: '#', className: 'num', render: (e) => e.index },
      { key: 'status', label: 'ending', render: (e) => <StatusBadge status={e.status} /> },
      { key: 'steps', label: 'steps', className: 'num', render: (e) => e.steps },
      ...metricNames.map<Column>((m) => ({
        key: `m:${m}`,
        // A metric may share its name with a record column (gridnav reports `steps` too).
        label: RECORD_COLUMNS.includes(m) ? `${m} (metric)` : m,
        className: 'num',
        render: (e) => fmtMetricValue(metricsOf(e.metrics)[m]),
      })),
      ...(hasTask ? [{ key: 'task' as const, label: 'task', render: (e: EpisodeRow) => e.task ?? '–' }] : []),
      { key: 'workerId', label: 'worker', className: 'num', render: (e) => `w${e.workerId}` },
      { key: 'durationMs', label: 'duration', className: 'num', render: (e) => fmtDuration(e.durationMs) },
    ],
    [metricNames, hasTask],
  );

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
  const visible = rows.slice(first, last);

  useLayoutEffect(() => {
    performance.measure('episode-table', { start: renderStart, end: performance.now(), detail: { rows: rows.length } });
  });

  const clickHeader = (key: SortKey) =>
    setSort((s) => (s.key === key ? { key, desc: !s.desc } : { key, desc: key !== 'index' && key !== 'status' && key !== 'task' }));

  const onScroll = () => {
    const top = scroller.current?.scrollTop ?? 0;
    if (Math.abs(top - scrollTop) >= ROW_HEIGHT / 2) setScrollTop(top);
  };

  return (
    <div className="episode-table" data-testid="episode-table" data-rows={rows.length}>
      <div className="table-tools">
        <label>
          Ending{' '}
          <select
            name="ending"
            value={ending}
            onChange={(ev) => {
              setEnding(ev.target.value);
              setScrollTop(0);
              if (scroller.current) scroller.current.scrollTop = 0;
            }}
          >
            <option value="">all ({episodes.length})</option>
            {EPISODE_STATUSES.filter((s) => counts.has(s)).map((s) => (
              <option key={s} value={s}>
                {titleCase(s)} ({counts.get(s)})
              </option>
            ))}
          </select>
        </label>
        <span className="muted">
          {rows.length} shown · sorted by {sort.key.replace(/^m:/, '')} {sort.desc ? '↓' : '↑'} · click a row (or focus it and press Enter)
          to open it
        </span>
      </div>
      {/* Focusable so that the keyboard can scroll it; each row is a tab stop too. */}
      {/* biome-ignore lint/a11y/useSemanticElements: a named scrolling box inside the page, not a section of it */}
      <div
        className="table-scroll"
        ref={scroller}
        onScroll={onScroll}
        style={{ maxHeight: height }}
        tabIndex={0}
        role="region"
        aria-label="episodes"
      >
        <table className="grid">
          <thead>
            <tr>
              {columns.map((c) => (
                <th
                  key={c.key}
                  className={c.className}
                  aria-sort={sort.key === c.key ? (sort.desc ? 'descending' : 'ascending') : 'none'}
                  onClick={() => clickHeader(c.key)}
                  data-sort-key={c.key}
                >
                  {/* The header handles the click; the button makes it reachable and pressable by keyboard. */}
                  <button type="button" className="th-sort" title={`sort by ${c.label}`}>
                    {c.label}
                    {sort.key === c.key ? (sort.desc ? ' ↓' : ' ↑') : ''}
                  </button>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {first > 0 && <tr className="spacer" style={{ height: first * ROW_HEIGHT }} aria-hidden />}
            {visible.map((e) => (
              <tr
                key={e.index}
                className={`clickable${selected === e.index ? ' selected' : ''}`}
                style={{ height: ROW_HEIGHT }}
                onClick={() => onOpen(e.index)}
                onKeyDown={(ev) => {
                  if (ev.target !== ev.currentTarget || (ev.key !== 'Enter' && ev.key !== ' ')) return;
                  ev.preventDefault();
                  onOpen(e.index);
                }}
                tabIndex={0}
                aria-current={selected === e.index ? 'true' : undefined}
                data-testid="episode-row"
                data-index={e.index}
              >
                {columns.map((c) => (
                  <td key={c.key} className={c.className}>
                    {c.render(e)}
                  </td>
                ))}
              </tr>
            ))}
            {last < rows.length && <tr className="spacer" style={{ height: (rows.length - last) * ROW_HEIGHT }} aria-hidden />}
          </tbody>
        </table>
        {rows.length === 0 && (
          <div className="state state-empty">{episodes.length ? 'No episode has this ending.' : 'No episode has finished yet.'}</div>
        )}
      </div>
    </div>
  );
}
