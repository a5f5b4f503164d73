/** One episode: its record, instruction and scene, images, and its node-firing log page by page. */
import { useEffect, useState } from 'react';
import { withToken } from '../api/client.js';
import type { ResultOf } from '../api/graphql.js';
import { EPISODE } from '../api/queries.js';
import { useQuery } from '../hooks/useQuery.js';
import { fmtBytes, fmtDuration, fmtMetricValue, fmtTime } from '../lib/format.js';
import { metricsOf } from '../lib/metrics.js';
import { EpisodeConversation } from './Conversation.js';
import { Json } from './Json.js';
import { SampleView, scoresOf } from './SampleView.js';
import { StatusBadge } from './StatusBadge.js';
import { ErrorBox, Loading } from './States.js';

const LOG_PAGE = 25;

type EpisodeDetail = NonNullable<NonNullable<ResultOf<typeof EPISODE>['run']>['episode']>;

export interface EpisodeDrawerProps {
  runId: string;
  index: number;
  /** Highest episode index in the run, for the next button. */
  lastIndex: number;
  onClose(): void;
  onGo(index: number): void;
}

export function EpisodeDrawer({ runId, index, lastIndex, onClose, onGo }: EpisodeDrawerProps) {
  const [logOffset, setLogOffset] = useState(0);
  useEffect(() => setLogOffset(0), [runId, index]);
  const q = useQuery(EPISODE, { id: runId, index, logOffset, logFirst: LOG_PAGE }, { keepPrevious: true });
  const stale = q.data?.run?.episode?.index !== index;
  const ep = stale ? undefined : q.data?.run?.episode;

  useEffect(() => {
    const onKey = (ev: KeyboardEvent) => {
      if (ev.key === 'Escape') return onClose();
      if (ev.key !== 'ArrowLeft' && ev.key !== 'ArrowRight') return;
      // Arrows keep their own meaning in a field, and with a modifier (browser history, text selection).
      if (ev.altKey || ev.ctrlKey || ev.metaKey || ev.shiftKey || isEditable(ev.target)) return;
      const to = ev.key === 'ArrowLeft' ? index - 1 : index + 1;
      if (to < 0 || to > lastIndex) return;
      ev.preventDefault();
      onGo(to);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose, onGo, index, lastIndex]);

  return (
    <aside className="drawer" role="dialog" aria-label={`episode ${index}`} data-testid="episode-drawer">
      <header className="drawer-head">
        <h2>Episode {index}</h2>
        <div className="drawer-nav">
          <button
            type="button"
            disabled={index <= 0}
            onClick={() => onGo(index - 1)}
            title="Previous episode (←)"
            aria-label="Previous episode"
          >
            ←
          </button>
          <button
            type="button"
            disabled={index >= lastIndex}
            onClick={() => onGo(index + 1)}
            title="Next episode (→)"
            aria-label="Next episode"
          >
            →
          </button>
          <button type="button" onClick={onClose} title="Close (Esc)" aria-label="Close">
            ✕
          </button>
        </div>
      </header>
      {/* Focusable so the keyboard can scroll it when nothing inside takes focus (a conversation without links). */}
      <section className="drawer-body" tabIndex={0} aria-label={`episode ${index} details`}>
        {q.error && !ep ? (
          <ErrorBox error={q.error} title="The episode could not be loaded" onRetry={q.refetch} />
        ) : !ep ? (
          q.loading ? (
            <Loading what="Loading the episode" />
          ) : (
            <ErrorBox error={`episode ${index} of run ${runId} has no record yet`} title="Not found" />
          )
        ) : (
          <EpisodeBody runId={runId} ep={ep} logOffset={logOffset} setLogOffset={setLogOffset} />
        )}
      </section>
    </aside>
  );
}

function isEditable(t: EventTarget | null): boolean {
  return t instanceof HTMLElement && (t.isContentEditable || t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA');
}

function EpisodeBody({
  runId,
  ep,
  logOffset,
  setLogOffset,
}: {
  runId: string;
  ep: EpisodeDetail;
  logOffset: number;
  setLogOffset(n: number): void;
}) {
  const images = ep.assets.filter((a) => a.mime.startsWith('image/'));
  const others = ep.assets.filter((a) => !a.mime.startsWith('image/'));
  const metrics = Object.entries(metricsOf(ep.metrics));
  const log = ep.log;
  // A dataset episode shows its input in the sample view, beside its target and answer.
  const isSample = ep.sampleId != null || ep.scores.length > 0;
  return (
    <>
      <section className="ep-summary">
        <StatusBadge status={ep.status} />
        <span className="mono">{ep.episodeId}</span>
      </section>
      {ep.error && (
        <div className="state state-error" role="alert">
          <strong>Error</strong>
          <p>{ep.error}</p>
        </div>
      )}
      {(ep.instruction || ep.scene || ep.task) && (
        <section>
          {ep.instruction && !isSample && <p className="instruction">“{ep.instruction}”</p>}
          <dl className="kv">
            {ep.task && (
              <>
                <dt>task</dt>
                <dd>{ep.task}</dd>
              </>
            )}
            {ep.scene && (
              <>
                <dt>scene</dt>
                <dd className="mono">{ep.scene}</dd>
              </>
            )}
          </dl>
        </section>
      )}
      {isSample && <SampleView input={ep.sampleId != null ? (ep.instruction ?? null) : null} scores={scoresOf(ep.scores)} />}
      {images.length > 0 && (
        <section className="ep-images">
          {images.map((a) => (
            <figure key={a.url}>
              <a href={withToken(a.url)} target="_blank" rel="noreferrer">
                <img src={withToken(a.url)} alt={a.name} data-testid="episode-image" />
              </a>
              <figcaption>
                {a.name} · {fmtBytes(a.bytes)}
              </figcaption>
            </figure>
          ))}
        </section>
      )}
      <EpisodeConversation runId={runId} index={ep.index} />
      <section>
        <h3>Metrics</h3>
        {metrics.length ? (
          <table className="grid compact">
            <tbody>
              {metrics.map(([k, v]) => (
                <tr key={k}>
                  <th>{k}</th>
                  <td className="num">{fmtMetricValue(v)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p className="muted">No metrics were recorded.</p>
        )}
      </section>
      <section>
        <h3>Record</h3>
        <dl className="kv">
          <dt>steps</dt>
          <dd>
            {ep.steps}
            {ep.stepBudget != null && <span className="muted"> of a budget of {ep.stepBudget}</span>}
          </dd>
          <dt>seed</dt>
          <dd className="mono">{ep.seed}</dd>
          <dt>worker</dt>
          <dd>w{ep.workerId}</dd>
          <dt>duration</dt>
          <dd>{fmtDuration(ep.durationMs)}</dd>
          <dt>started</dt>
          <dd>{fmtTime(ep.startedAt)}</dd>
          <dt>finished</dt>
          <dd>{fmtTime(ep.finishedAt)}</dd>
        </dl>
        {others.length > 0 && (
          <ul className="assets">
            {others.map((a) => (
              <li key={a.url}>
                <a href={withToken(a.url)} target="_blank" rel="noreferrer">
                  {a.name}
                </a>{' '}
                <span className="muted">
                  {a.mime} · {fmtBytes(a.bytes)}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section>
        <h3>
          Node firings <span className="muted">({log.total})</span>
        </h3>
        {log.total === 0 ? (
          <p className="muted">This episode's log is empty.</p>
        ) : (
          <>
            <table className="grid compact log" data-testid="episode-log">
              <thead>
                <tr>
                  <th className="num">step</th>
                  <th>node</th>
                  <th>type</th>
                  <th className="num">ms</th>
                  <th>in / out</th>
                </tr>
              </thead>
              <tbody>
                {log.lines.map((l) => (
                  <tr key={l.line} className={l.error ? 'row-error' : undefined}>
                    <td className="num">{l.step ?? '–'}</td>
                    <td className="mono">{l.nodeId}</td>
                    <td className="mono small">{l.type}</td>
                    <td className="num">{fmtMetricValue(l.ms)}</td>
                    <td>
                      {l.error ? <span className="inline-error">{l.error}</span> : null}
                      <details>
                        <summary>show</summary>
                        <Json value={{ inputs: l.inputs, outputs: l.outputs }} maxChars={4000} />
                      </details>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <div className="pager">
              <button type="button" disabled={logOffset === 0} onClick={() => setLogOffset(Math.max(0, logOffset - LOG_PAGE))}>
                ← earlier
              </button>
              <span>
                {logOffset + 1}–{Math.min(log.total, logOffset + LOG_PAGE)} of {log.total}
              </span>
              <button type="button" disabled={logOffset + LOG_PAGE >= log.total} onClick={() => setLogOffset(logOffset + LOG_PAGE)}>
                later →
              </button>
            </div>
          </>
        )}
      </section>
    </>
  );
}
