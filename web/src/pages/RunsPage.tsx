/**
 * Every run, newest first, filterable by status, graph, tag and text (kept in the address),
 * kept live while runs are in flight. Each row says what tells the run apart (its name, tags and
 * the config that differs from the other runs in view) and how its episodes ended; tick rows to compare them.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import type { RunListRow } from '../api/fragments.js';
import { GRAPH_NAMES, QUEUE_CHANGED, RUNS } from '../api/queries.js';
import { ProgressBar } from '../components/ProgressBar.js';
import { RunEndings } from '../components/RunEndings.js';
import { StatusBadge } from '../components/StatusBadge.js';
import { Empty, ErrorBox, Loading } from '../components/States.js';
import { href, navigate, type RunsFilters } from '../hooks/useHashRoute.js';
import { useNow } from '../hooks/useNow.js';
import { useQuery } from '../hooks/useQuery.js';
import { useSubscription } from '../hooks/useSubscription.js';
import { useThrottled } from '../hooks/useThrottled.js';
import { elapsedMs, fmtDuration, fmtNumber, fmtTime, titleCase } from '../lib/format.js';
import { headlineMetrics, metricsOf, shownStderr } from '../lib/metrics.js';
import { problemCount, runColor } from '../lib/endings.js';
import { configDiffs } from '../lib/runConfig.js';
import { RUN_STATUSES, isLiveRun } from '../lib/statuses.js';

const PAGE = 50;
/** Typing in the search box queries once it pauses this long. */
const SEARCH_DEBOUNCE_MS = 250;

export function RunsPage({ initial }: { initial: RunsFilters }) {
  const [filters, setFilters] = useState(initial);
  const [searchText, setSearchText] = useState(initial.q);
  /** Ticked runs (id → createdAt, so the oldest can be the baseline), kept across pages and filters. */
  const [picked, setPicked] = useState<ReadonlyMap<string, string>>(new Map());
  /** Set by a choice (a status, a graph, a tag, a page) so the address change becomes a history entry; typing replaces. */
  const addToHistory = useRef(false);
  const set = (patch: Partial<RunsFilters>, choice = true) => {
    addToHistory.current = choice;
    setFilters((f) => ({ ...f, page: 0, ...patch }));
  };
  const turnPage = (by: number) => {
    addToHistory.current = true;
    setFilters((f) => ({ ...f, page: f.page + by }));
  };

  // An address with other filters (the Runs link, Back, a pasted link) replaces those on screen.
  useEffect(() => {
    setFilters(initial);
    setSearchText(initial.q);
  }, [initial]);
  // The address follows the filters: a choice is a history entry (Back returns to the filters before it), a keystroke is not.
  useEffect(() => {
    const to = href.runs(filters);
    if (location.hash !== to) {
      if (addToHistory.current) history.pushState(null, '', to);
      else history.replaceState(null, '', to);
    }
    addToHistory.current = false;
  }, [filters]);
  useEffect(() => {
    if (searchText === filters.q) return;
    const t = setTimeout(() => setFilters((f) => ({ ...f, page: 0, q: searchText })), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [searchText, filters.q]);

  const vars = {
    status: (filters.status || null) as (typeof RUN_STATUSES)[number] | null,
    graphName: filters.graph || null,
    tag: filters.tag || null,
    search: filters.q || null,
    offset: filters.page * PAGE,
    first: PAGE,
  };
  const runs = useQuery(RUNS, vars, { keepPrevious: true });
  const graphs = useQuery(GRAPH_NAMES);
  const list = runs.data?.runs.items ?? [];
  const total = runs.data?.runs.total ?? 0;
  const anyLive = list.some((r) => isLiveRun(r.status));
  const now = useNow(anyLive ? 1000 : 0);
  const diffs = useMemo(() => configDiffs(list), [list]);

  // Queue changes (submit, admit, finish) and progress of running runs arrive as events;
  // a slow poll while something is live covers anything they miss.
  const refetch = useThrottled(runs.refetch, 500);
  useSubscription(QUEUE_CHANGED, {}, { onData: refetch });
  useEffect(() => {
    if (!anyLive) return;
    const t = setInterval(refetch, 2000);
    return () => clearInterval(t);
  }, [anyLive, refetch]);

  const graphNames = useMemo(() => {
    const s = new Set((graphs.data?.graphs ?? []).map((g) => g.name));
    for (const r of list) s.add(r.graphName);
    return [...s].sort();
  }, [graphs.data, list]);
  const tagsInView = useMemo(() => [...new Set(list.flatMap((r) => r.tags))].sort(), [list]);
  const filtered = Boolean(filters.status || filters.graph || filters.tag || filters.q);

  const toggle = (r: RunListRow) =>
    setPicked((prev) => {
      const next = new Map(prev);
      if (next.has(r.id)) next.delete(r.id);
      else next.set(r.id, r.createdAt as string);
      return next;
    });
  const compare = () => {
    // The oldest ticked run is the baseline: usually the one the others change something in.
    const ids = [...picked].sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[0].localeCompare(b[0]))).map(([id]) => id);
    navigate(href.compare(ids[0]!, ids.slice(1)));
  };

  return (
    <div className="page">
      <header className="page-head">
        <h1>Runs</h1>
        <div className="filters">
          <label>
            Status{' '}
            <select name="status" value={filters.status} onChange={(e) => set({ status: e.target.value })}>
              <option value="">any</option>
              {RUN_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {titleCase(s)}
                </option>
              ))}
            </select>
          </label>
          <label>
            Graph{' '}
            <select name="graph" value={filters.graph} onChange={(e) => set({ graph: e.target.value })}>
              <option value="">any</option>
              {graphNames.map((g) => (
                <option key={g} value={g}>
                  {g}
                </option>
              ))}
            </select>
          </label>
          <label>
            Tag{' '}
            <input
              name="tag"
              list="run-tags"
              size={10}
              value={filters.tag}
              onChange={(e) => set({ tag: e.target.value.trim() }, false)}
              placeholder="any"
            />
            <datalist id="run-tags">
              {tagsInView.map((t) => (
                <option key={t} value={t} />
              ))}
            </datalist>
          </label>
          <label>
            Search{' '}
            <input
              name="q"
              type="search"
              size={16}
              value={searchText}
              onChange={(e) => setSearchText(e.target.value)}
              placeholder="name, note, id…"
            />
          </label>
          <button type="button" data-testid="compare-selected" disabled={picked.size < 2} onClick={compare}>
            Compare{picked.size > 0 ? ` (${picked.size})` : ''}
          </button>
          <a className="button primary" href={href.newRun()}>
            New run
          </a>
        </div>
      </header>
      {runs.error && !runs.data ? (
        <ErrorBox error={runs.error} title="The runs could not be loaded" onRetry={runs.refetch} />
      ) : runs.loading && !runs.data ? (
        <Loading what="Loading runs" />
      ) : list.length === 0 ? (
        <Empty>
          {filters.page > 0 && total > 0 ? (
            <>
              Page {filters.page + 1} is past the last of {total} {filtered ? 'matching ' : ''}runs.{' '}
              <a href={href.runs({ ...filters, page: 0 })}>Go to the first page</a>.
            </>
          ) : filtered ? (
            'No run matches these filters.'
          ) : (
            <>
              No runs yet. <a href={href.newRun()}>Start one</a>.
            </>
          )}
        </Empty>
      ) : (
        <div className="panel table-wrap flush">
          <table className="grid runs" data-testid="runs-table">
            <thead>
              <tr>
                <th>
                  <span className="sr-only">compare</span>
                </th>
                <th>run</th>
                <th>status</th>
                <th>graph</th>
                <th title="The model each model-backed node asked for (and, where the provider named another, what answered)">model</th>
                <th title="The config values that are not the same in every run on this page">config</th>
                <th className="progress-col">progress</th>
                <th>headline metrics</th>
                <th>started</th>
                <th className="num">duration</th>
              </tr>
            </thead>
            <tbody>
              {list.map((r) => (
                <tr
                  key={r.id}
                  className={picked.has(r.id) ? 'clickable selected' : 'clickable'}
                  onClick={() => navigate(href.run(r.id))}
                  data-run-id={r.id}
                  data-status={r.status}
                >
                  <td>
                    <input
                      type="checkbox"
                      onClick={(e) => e.stopPropagation()}
                      aria-label={`Pick ${r.name ?? r.id} to compare`}
                      checked={picked.has(r.id)}
                      onChange={() => toggle(r)}
                    />
                  </td>
                  <td className="run-cell">
                    <a href={href.run(r.id)} onClick={(e) => e.stopPropagation()} className={r.name ? 'run-name' : 'mono'}>
                      {r.name ?? r.id}
                    </a>
                    {r.name && <div className="mono muted small">{r.id}</div>}
                    {typeof metricsOf(r.spec).sweepId === 'string' && (
                      <a
                        className="small"
                        href={href.sweep(metricsOf(r.spec).sweepId as string)}
                        onClick={(e) => e.stopPropagation()}
                        title="The sweep this run belongs to"
                      >
                        in a sweep →
                      </a>
                    )}
                    {r.tags.length > 0 && (
                      <div className="run-tags">
                        {r.tags.map((t) => (
                          <button
                            type="button"
                            key={t}
                            className="tag-chip"
                            title={`Show runs tagged ${t}`}
                            onClick={(e) => {
                              e.stopPropagation();
                              set({ tag: t });
                            }}
                          >
                            {t}
                          </button>
                        ))}
                      </div>
                    )}
                  </td>
                  <td data-problems={problemCount(r.statusCounts) || undefined}>
                    <StatusBadge status={r.status} color={runColor(r.status, r.statusCounts)} />
                    <RunEndings counts={r.statusCounts} />
                    {r.error && (
                      <div className="run-error" data-testid="run-error" title={`${r.error.code}: ${r.error.message}`}>
                        {r.error.message}
                      </div>
                    )}
                  </td>
                  <td>{r.graphName}</td>
                  <td className="model-cell">
                    {r.models.length === 0 ? <span className="muted">–</span> : r.models.map((m) => <ModelChip key={m.node} model={m} />)}
                  </td>
                  <td>
                    <div className="config-cell">
                      {(diffs.get(r.id) ?? []).map((c) => (
                        <span key={c.key} className="config-chip" title={`${c.key}: ${c.text}`}>
                          {c.label}=<b>{c.text}</b>
                        </span>
                      ))}
                    </div>
                  </td>
                  <td className="progress-col">
                    <ProgressBar done={r.episodesDone} total={r.episodeCount} color={runColor(r.status, r.statusCounts)} />
                  </td>
                  <td>
                    <div className="metrics-cell">
                      {headlineMetrics(r.aggregateMetrics).map((m) => (
                        <span
                          key={m.name}
                          className="metric-chip"
                          title={`${m.name}: mean ${m.mean}${shownStderr(m) != null ? ` ± ${shownStderr(m)}` : ''} (n=${m.count})`}
                        >
                          {m.name} <b>{fmtNumber(m.mean)}</b>
                        </span>
                      ))}
                      {r.aggregateMetrics.length === 0 && <span className="muted">–</span>}
                    </div>
                  </td>
                  <td>{fmtTime(r.startedAt)}</td>
                  <td className="num">{fmtDuration(elapsedMs(r.startedAt, r.finishedAt, now))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {total > PAGE && (
        <div className="pager">
          <button type="button" disabled={filters.page === 0} onClick={() => turnPage(-1)}>
            ← newer
          </button>
          <span>
            {filters.page * PAGE + 1}–{filters.page * PAGE + list.length} of {total}
          </span>
          <button type="button" disabled={(filters.page + 1) * PAGE >= total} onClick={() => turnPage(1)}>
            older →
          </button>
        </div>
      )}
    </div>
  );
}

/** "fake-1", or "gpt-4o → gpt-4o-2024-08-06" when the answers named another model than the one asked. */
function ModelChip({ model: m }: { model: { node: string; model: string; reported: ReadonlyArray<{ model: string }> } }) {
  const answered = [...new Set(m.reported.map((r) => r.model))].filter((name) => name !== m.model);
  return (
    <span
      className="config-chip"
      data-testid="run-model"
      title={`node ${m.node} asks ${m.model}${answered.length ? `; answered by ${answered.join(', ')}` : ''}`}
    >
      {m.model}
      {answered.length > 0 && <> → {answered.join(', ')}</>}
    </span>
  );
}
