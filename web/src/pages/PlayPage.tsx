/**
 * Play one episode live: every step's observation, action and metrics stream in over the
 * `playEpisode` subscription, and the trajectory picture grows with them. While it plays the
 * scheduler holds its interactive lock, so queued runs wait.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { subscribe } from '../api/client.js';
import { GRAPHS, PLAY_EPISODE } from '../api/queries.js';
import type { GraphInfo, NodesetInfo, PlayEvent } from '../api/types.js';
import { Json } from '../components/Json.js';
import { StatusBadge } from '../components/StatusBadge.js';
import { Empty, ErrorBox, Loading } from '../components/States.js';
import { href } from '../hooks/useHashRoute.js';
import { useQuery } from '../hooks/useQuery.js';
import { fmtMetricValue } from '../lib/format.js';
import { checkOverrides } from '../lib/overrides.js';

type Phase = 'idle' | 'playing' | 'done' | 'stopped' | 'error';

export function PlayPage({ initialGraph }: { initialGraph: string | null }) {
  const q = useQuery<{ graphs: GraphInfo[]; nodesets: NodesetInfo[] }>(GRAPHS);
  const graphs = q.data?.graphs ?? [];
  const [graphName, setGraphName] = useState(initialGraph ?? '');
  const [index, setIndex] = useState('0');
  const [seed, setSeed] = useState('0');
  const [dataset, setDataset] = useState('');
  const [split, setSplit] = useState('');
  const [stepBudget, setStepBudget] = useState('');
  const [overridesText, setOverridesText] = useState('');
  const [events, setEvents] = useState<PlayEvent[]>([]);
  const [phase, setPhase] = useState<Phase>('idle');
  const [error, setError] = useState<string | null>(null);
  const [cursor, setCursor] = useState<number | null>(null);
  const [holder, setHolder] = useState<string | null>(null);
  const stop = useRef<(() => void) | null>(null);

  useEffect(() => {
    if (!graphName && graphs[0]) setGraphName(graphs[0].name);
  }, [graphs, graphName]);
  useEffect(() => () => stop.current?.(), []);

  const graph = graphs.find((g) => g.name === graphName);
  const overrides = checkOverrides(overridesText, graph?.nodes.map((n) => n.id) ?? []);

  const play = () => {
    if (!overrides.ok) return;
    stop.current?.();
    setEvents([]);
    setCursor(null);
    setError(null);
    setHolder(null);
    setPhase('playing');
    let ended = false;
    stop.current = subscribe<{ playEpisode: PlayEvent }>(
      PLAY_EPISODE,
      {
        graphName,
        index: intOrRaw(index),
        seed: intOrRaw(seed),
        stepBudget: stepBudget.trim() ? intOrRaw(stepBudget) : null,
        overrides: overrides.value,
        dataset: dataset.trim() || null,
        split: split.trim() || null,
      },
      {
        next: (d) => {
          const ev = d.playEpisode;
          if (ev.kind === 'STARTED') {
            setHolder(ev.holder);
            return;
          }
          setEvents((list) => [...list, ev]);
          if (ev.kind === 'FINISHED') {
            ended = true;
            setPhase('done');
          }
        },
        error: (e) => {
          ended = true;
          setPhase('error');
          setError(e.message);
        },
        complete: () => {
          if (!ended) setPhase((p) => (p === 'playing' ? 'done' : p));
          stop.current = null;
        },
      },
    );
  };

  const halt = () => {
    stop.current?.();
    stop.current = null;
    setPhase('stopped');
  };

  if (q.error && !q.data) return <ErrorBox error={q.error} title="The graphs could not be loaded" onRetry={q.refetch} />;
  if (!q.data) return <Loading what="Loading graphs" />;
  if (graphs.length === 0) return <Empty>No graphs are installed.</Empty>;

  const steps = events.filter((e) => e.kind === 'STEP');
  const shown = cursor == null ? events[events.length - 1] : events[cursor];
  const image = latestImage(events, cursor == null ? events.length - 1 : cursor);
  const last = events[events.length - 1];
  const final = last?.kind === 'FINISHED' ? last : null;
  const playing = phase === 'playing';

  return (
    <div className="page play-page" data-phase={phase}>
      <header className="page-head">
        <h1>Play</h1>
        <p className="subtitle">One episode, step by step, straight from the graph. Queued runs wait while it plays.</p>
      </header>
      <div className="play-grid">
        <section className="panel form play-form">
          <label>
            <span className="field-label">Graph</span>
            <select name="graphName" value={graphName} disabled={playing} onChange={(e) => setGraphName(e.target.value)}>
              {graphs.map((g) => (
                <option key={g.name}>{g.name}</option>
              ))}
            </select>
          </label>
          <div className="row">
            <label>
              <span className="field-label">Episode</span>
              <input name="index" inputMode="numeric" value={index} disabled={playing} onChange={(e) => setIndex(e.target.value)} />
            </label>
            <label>
              <span className="field-label">Seed</span>
              <input name="seed" inputMode="numeric" value={seed} disabled={playing} onChange={(e) => setSeed(e.target.value)} />
            </label>
            <label>
              <span className="field-label">Step budget</span>
              <input name="stepBudget" inputMode="numeric" placeholder="default" value={stepBudget} disabled={playing} onChange={(e) => setStepBudget(e.target.value)} />
            </label>
          </div>
          <div className="row">
            <label>
              <span className="field-label">Dataset</span>
              <input name="dataset" value={dataset} disabled={playing} onChange={(e) => setDataset(e.target.value)} />
            </label>
            <label>
              <span className="field-label">Split</span>
              <input name="split" value={split} disabled={playing} onChange={(e) => setSplit(e.target.value)} />
            </label>
          </div>
          <div className={`field${!overrides.ok ? ' has-error' : ''}`}>
            <label>
              <span className="field-label">Overrides (JSON)</span>
              <textarea name="overrides" rows={3} spellCheck={false} value={overridesText} disabled={playing} onChange={(e) => setOverridesText(e.target.value)} />
            </label>
            {!overrides.ok ? <div className="field-error">{overrides.error}</div> : overrides.warning ? <div className="field-hint">warning: {overrides.warning}</div> : null}
          </div>
          <div className="form-actions">
            {playing ? (
              <button type="button" className="danger" onClick={halt} data-testid="stop-play">
                Stop
              </button>
            ) : (
              <button type="button" className="primary" onClick={play} disabled={!overrides.ok || !graphName} data-testid="play">
                {phase === 'idle' ? 'Play' : 'Play again'}
              </button>
            )}
            <a className="button" href={href.newRun(graphName)}>
              Batch run…
            </a>
          </div>
          <div className="play-status" data-testid="play-status">
            {phase === 'idle' && <span className="muted">Press Play to run episode {index} of {graphName}.</span>}
            {playing && (
              <span>
                <span className="spinner" aria-hidden /> playing · step {steps.length ? steps[steps.length - 1]!.step : 0}
                {holder && <span className="muted small"> · holding the interactive lock as “{holder}”</span>}
              </span>
            )}
            {phase === 'done' && final && (
              <span>
                Finished after {final.record?.steps ?? steps.length} steps {final.status && <StatusBadge status={final.status} />}
                {final.record?.error && <span className="inline-error">{final.record.error}</span>}
              </span>
            )}
            {phase === 'done' && !final && <span>Finished.</span>}
            {phase === 'stopped' && <span className="muted">Stopped after {steps.length} steps.</span>}
            {phase === 'error' && <span className="inline-error">{error}</span>}
          </div>
        </section>

        <section className="panel play-view">
          {events.length === 0 ? (
            <Empty>{playing ? 'Waiting for the first step…' : 'Nothing played yet.'}</Empty>
          ) : (
            <>
              <div className="scrubber">
                <input
                  type="range"
                  min={0}
                  max={events.length - 1}
                  value={cursor ?? events.length - 1}
                  onChange={(e) => {
                    const v = Number(e.target.value);
                    setCursor(v >= events.length - 1 ? null : v);
                  }}
                  aria-label="step"
                />
                <span>
                  event {(cursor ?? events.length - 1) + 1} / {events.length}
                  {cursor != null && (
                    <button type="button" className="small" onClick={() => setCursor(null)}>
                      follow live
                    </button>
                  )}
                </span>
              </div>
              <div className="play-panes">
                <figure className="trajectory">
                  {image ? <img src={image} alt="trajectory so far" data-testid="play-image" /> : <div className="muted">no picture yet</div>}
                  <figcaption>trajectory</figcaption>
                </figure>
                <div className="play-detail">
                  {shown && <StepDetail ev={shown} />}
                </div>
              </div>
              <StepList events={events} cursor={cursor} onPick={setCursor} />
            </>
          )}
        </section>
      </div>
    </div>
  );
}

/** A number when the text is one; otherwise the text itself, for the server to refuse by name. */
function intOrRaw(s: string): number | string {
  const n = Number(s);
  return s.trim() !== '' && Number.isFinite(n) ? n : s;
}

function latestImage(events: PlayEvent[], upTo: number): string | null {
  for (let i = Math.min(upTo, events.length - 1); i >= 0; i--) if (events[i]?.image) return events[i]!.image;
  return null;
}

function StepDetail({ ev }: { ev: PlayEvent }) {
  return (
    <div data-testid="play-step">
      <h3>
        {ev.kind === 'FINISHED' ? 'End of episode' : `Step ${ev.step ?? '?'}`}
        {ev.status && <StatusBadge status={ev.status} />}
      </h3>
      {ev.record?.error && <p className="inline-error">{ev.record.error}</p>}
      <dl className="kv">
        <dt>action</dt>
        <dd>{ev.action == null ? <span className="muted">–</span> : typeof ev.action === 'object' ? <Json value={ev.action} maxChars={2000} /> : <b className="mono">{String(ev.action)}</b>}</dd>
      </dl>
      {ev.metrics && Object.keys(ev.metrics).length > 0 && (
        <table className="grid compact" data-testid="play-metrics">
          <tbody>
            {Object.entries(ev.metrics).map(([k, v]) => (
              <tr key={k}>
                <th>{k}</th>
                <td className="num">{fmtMetricValue(v)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {ev.observation != null && (
        <details open>
          <summary>observation</summary>
          <Json value={ev.observation} maxChars={6000} />
        </details>
      )}
    </div>
  );
}

function StepList({ events, cursor, onPick }: { events: PlayEvent[]; cursor: number | null; onPick(i: number | null): void }) {
  const ref = useRef<HTMLOListElement>(null);
  const at = cursor ?? events.length - 1;
  useEffect(() => {
    if (cursor == null && ref.current) ref.current.scrollTop = ref.current.scrollHeight;
  }, [events.length, cursor]);
  const items = useMemo(() => events.map((e, i) => ({ e, i })), [events]);
  return (
    <ol className="step-list" ref={ref} data-testid="play-steps" tabIndex={0} aria-label="steps played (the slider above picks one)">
      {items.map(({ e, i }) => (
        <li key={i} className={i === at ? 'selected' : undefined} onClick={() => onPick(i === events.length - 1 ? null : i)}>
          <span className="num">{e.step ?? '·'}</span> <span className="mono">{e.kind === 'FINISHED' ? `end: ${e.status?.toLowerCase() ?? ''}` : actionText(e.action)}</span>
        </li>
      ))}
    </ol>
  );
}

function actionText(a: unknown): string {
  if (a == null) return '–';
  if (typeof a === 'object') {
    const s = JSON.stringify(a);
    return s.length > 60 ? `${s.slice(0, 57)}…` : s;
  }
  return String(a);
}
