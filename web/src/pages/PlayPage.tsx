/**
 * Play one episode live: every step's observation, action and metrics stream in over the
 * `playEpisode` subscription, and the trajectory picture grows with them. While it plays the
 * scheduler holds its interactive lock, so queued runs wait.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { subscribe } from '../api/client.js';
import { START_EVAL_INPUT_DEFAULTS } from '../api/inputDefaults.js';
import { GRAPHS, PLAY_EPISODE, type GraphInfo, type NodesetInfo, type PlayEvent } from '../api/queries.js';
import { ChoiceInput, choiceInputId } from '../components/ChoiceInput.js';
import { Json } from '../components/Json.js';
import { StatusBadge } from '../components/StatusBadge.js';
import { Empty, ErrorBox, Loading } from '../components/States.js';
import { href } from '../hooks/useHashRoute.js';
import { choicesHint, declaredChoices, useEpisodeChoices } from '../hooks/useEpisodeChoices.js';
import { useQuery } from '../hooks/useQuery.js';
import { formMessage } from '../lib/fieldErrors.js';
import { fmtMetricValue } from '../lib/format.js';
import { metricsOf } from '../lib/metrics.js';
import { checkOverrides } from '../lib/overrides.js';
import { initialRunForm, stepBudgetPlaceholder, toPlayVariables, type RunForm } from '../lib/runForm.js';

type Phase = 'idle' | 'playing' | 'done' | 'stopped' | 'error';

export function PlayPage({ initialGraph }: { initialGraph: string | null }) {
  const q = useQuery(GRAPHS);
  const d = useQuery(START_EVAL_INPUT_DEFAULTS);
  if (q.error && !q.data) return <ErrorBox error={q.error} title="The graphs could not be loaded" onRetry={q.refetch} />;
  if (d.error && !d.data) return <ErrorBox error={d.error} title="The server's defaults could not be loaded" onRetry={d.refetch} />;
  if (!q.data || !d.data) return <Loading what="Loading graphs" />;
  const graphs = q.data.graphs;
  if (graphs.length === 0) return <Empty>No graphs are installed.</Empty>;
  const form = initialRunForm(d.data.__type?.inputFields ?? [], initialGraph || (graphs[0]?.name ?? ''));
  return <Player graphs={graphs} nodesets={q.data.nodesets} initial={form} />;
}

function Player({ graphs, nodesets, initial }: { graphs: GraphInfo[]; nodesets: NodesetInfo[]; initial: RunForm }) {
  const [form, setForm] = useState<RunForm>(initial);
  const set = <K extends keyof RunForm>(k: K, v: RunForm[K]) => setForm((f) => ({ ...f, [k]: v }));
  const { graphName, index } = form;
  const [events, setEvents] = useState<PlayEvent[]>([]);
  const [phase, setPhase] = useState<Phase>('idle');
  const [error, setError] = useState<string | null>(null);
  const [cursor, setCursor] = useState<number | null>(null);
  const [holder, setHolder] = useState<string | null>(null);
  const stop = useRef<(() => void) | null>(null);

  useEffect(() => () => stop.current?.(), []);

  const graph = graphs.find((g) => g.name === graphName);
  const overrides = checkOverrides(form.overrides, graph?.nodes.map((n) => n.id) ?? []);
  const declared = useMemo(() => declaredChoices(graph, nodesets), [graph, nodesets]);
  const choices = useEpisodeChoices(graphName, form.dataset, form.split, declared);
  const hint = choicesHint(choices);

  const play = () => {
    if (!overrides.ok) return;
    stop.current?.();
    setEvents([]);
    setCursor(null);
    setError(null);
    setHolder(null);
    setPhase('playing');
    let ended = false;
    stop.current = subscribe(PLAY_EPISODE, toPlayVariables(form, overrides.value), {
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
        setError(formMessage(e.message, true));
      },
      complete: () => {
        if (!ended) setPhase((p) => (p === 'playing' ? 'done' : p));
        stop.current = null;
      },
    });
  };

  const halt = () => {
    stop.current?.();
    stop.current = null;
    setPhase('stopped');
  };

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
            <select name="graphName" value={graphName} disabled={playing} onChange={(e) => set('graphName', e.target.value)}>
              {graphs.map((g) => (
                <option key={g.name}>{g.name}</option>
              ))}
            </select>
          </label>
          <div className="row">
            <label>
              <span className="field-label">Episode</span>
              <input name="index" inputMode="numeric" value={index} disabled={playing} onChange={(e) => set('index', e.target.value)} />
            </label>
            <label>
              <span className="field-label">Seed</span>
              <input name="seed" inputMode="numeric" value={form.seed} disabled={playing} onChange={(e) => set('seed', e.target.value)} />
            </label>
            <label>
              <span className="field-label">Step budget</span>
              <input
                name="stepBudget"
                inputMode="numeric"
                placeholder={stepBudgetPlaceholder(graph?.stepBudget)}
                title="blank: the env's budget for the episode where it gives one, else this"
                value={form.stepBudget}
                disabled={playing}
                onChange={(e) => set('stepBudget', e.target.value)}
              />
            </label>
          </div>
          <div className="row">
            {(['dataset', 'split'] as const).map((name) => (
              <label key={name} htmlFor={choiceInputId('play-', name)}>
                <span className="field-label">{name === 'dataset' ? 'Dataset' : 'Split'}</span>
                <ChoiceInput
                  name={name}
                  prefix="play-"
                  choices={choices}
                  value={form[name]}
                  disabled={playing}
                  onChange={(v) => set(name, v)}
                />
              </label>
            ))}
          </div>
          {hint && (
            <div className="field-hint" data-testid="episode-choices">
              {hint}
            </div>
          )}
          <div className={`field${!overrides.ok ? ' has-error' : ''}`}>
            <label>
              <span className="field-label">Overrides (JSON)</span>
              <textarea
                name="overrides"
                rows={3}
                spellCheck={false}
                value={form.overrides}
                disabled={playing}
                onChange={(e) => set('overrides', e.target.value)}
              />
            </label>
            {!overrides.ok ? (
              <div className="field-error">{overrides.error}</div>
            ) : overrides.warning ? (
              <div className="field-hint">warning: {overrides.warning}</div>
            ) : null}
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
            {phase === 'idle' && (
              <span className="muted">
                Press Play to run episode {index} of {graphName}.
              </span>
            )}
            {playing && (
              <span>
                <span className="spinner" aria-hidden /> playing · step {steps.length ? steps[steps.length - 1]!.step : 0}
                {holder && <span className="muted small"> · holding the interactive lock as “{holder}”</span>}
              </span>
            )}
            {phase === 'done' && final && (
              <span>
                Finished after {recordOf(final).steps ?? steps.length} steps {final.status && <StatusBadge status={final.status} />}
                {recordOf(final).error && <span className="inline-error">{recordOf(final).error}</span>}
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
                  {image ? (
                    <img src={image} alt="trajectory so far" data-testid="play-image" />
                  ) : (
                    <div className="muted">no picture yet</div>
                  )}
                  <figcaption>trajectory</figcaption>
                </figure>
                <div className="play-detail">{shown && <StepDetail ev={shown} />}</div>
              </div>
              <StepList events={events} cursor={cursor} onPick={setCursor} />
            </>
          )}
        </section>
      </div>
    </div>
  );
}

/** The FINISHED event's episode record (JSON in the schema): the two fields this page shows. */
function recordOf(ev: PlayEvent): { steps?: number; error?: string } {
  const r = metricsOf(ev.record);
  return { steps: typeof r.steps === 'number' ? r.steps : undefined, error: typeof r.error === 'string' ? r.error : undefined };
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
      {recordOf(ev).error && <p className="inline-error">{recordOf(ev).error}</p>}
      <dl className="kv">
        <dt>action</dt>
        <dd>
          {ev.action == null ? (
            <span className="muted">–</span>
          ) : typeof ev.action === 'object' ? (
            <Json value={ev.action} maxChars={2000} />
          ) : (
            <b className="mono">{String(ev.action)}</b>
          )}
        </dd>
      </dl>
      {Object.keys(metricsOf(ev.metrics)).length > 0 && (
        <table className="grid compact" data-testid="play-metrics">
          <tbody>
            {Object.entries(metricsOf(ev.metrics)).map(([k, v]) => (
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
        // biome-ignore lint/a11y/useKeyWithClickEvents: the step slider above is the keyboard's way to pick a step
        <li key={i} className={i === at ? 'selected' : undefined} onClick={() => onPick(i === events.length - 1 ? null : i)}>
          <span className="num">{e.step ?? '·'}</span>{' '}
          <span className="mono">{e.kind === 'FINISHED' ? `end: ${e.status?.toLowerCase() ?? ''}` : actionText(e.action)}</span>
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
