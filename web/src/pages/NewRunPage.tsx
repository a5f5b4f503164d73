/** Start a run: pick a graph, set the batch, and see any refusal beside the field it is about. */
import { useMemo, useState, type ReactNode } from 'react';
import { gql, GraphQLRequestError } from '../api/client.js';
import { START_EVAL_INPUT_DEFAULTS } from '../api/inputDefaults.js';
import { GRAPHS, RUN_SPEC, START_EVAL, type GraphInfo, type NodesetInfo } from '../api/queries.js';
import { ChoiceInput } from '../components/ChoiceInput.js';
import { GraphDetails } from '../components/GraphDetails.js';
import { Empty, ErrorBox, Loading } from '../components/States.js';
import { href, navigate } from '../hooks/useHashRoute.js';
import { choicesHint, declaredChoices, useEpisodeChoices } from '../hooks/useEpisodeChoices.js';
import { useQuery } from '../hooks/useQuery.js';
import { splitErrors, type StartField } from '../lib/fieldErrors.js';
import { checkOverrides } from '../lib/overrides.js';
import { formFromSpec, initialRunForm, stepBudgetPlaceholder, toStartEvalInput, type RunForm } from '../lib/runForm.js';

export function NewRunPage({ initialGraph, fromRun }: { initialGraph: string | null; fromRun?: string | null }) {
  const q = useQuery(GRAPHS);
  const d = useQuery(START_EVAL_INPUT_DEFAULTS);
  // Run again: the form starts from that run's spec.
  const src = useQuery(RUN_SPEC, { id: fromRun ?? '' }, { skip: !fromRun });
  if (q.error && !q.data) return <ErrorBox error={q.error} title="The graphs could not be loaded" onRetry={q.refetch} />;
  if (d.error && !d.data) return <ErrorBox error={d.error} title="The server's defaults could not be loaded" onRetry={d.refetch} />;
  if (fromRun && src.error && !src.data)
    return <ErrorBox error={src.error} title={`The spec of run ${fromRun} could not be loaded`} onRetry={src.refetch} />;
  if (!q.data || !d.data || (fromRun && !src.data)) return <Loading what="Loading graphs" />;
  const graphs = q.data.graphs;
  if (graphs.length === 0) return <Empty>No graphs are installed: add one under graphs/ or the workspace overlay.</Empty>;
  const inputFields = d.data.__type?.inputFields ?? [];
  let form = initialRunForm(inputFields, initialGraph || (graphs[0]?.name ?? ''));
  const run = src.data?.run;
  if (fromRun && run)
    form = formFromSpec(
      form,
      run.spec,
      inputFields.map((f) => f.name),
      run,
    );
  return <NewRunForm graphs={graphs} nodesets={q.data.nodesets} initial={form} fromRun={run ? { id: run.id, name: run.name } : null} />;
}

function NewRunForm({
  graphs,
  nodesets,
  initial,
  fromRun,
}: {
  graphs: GraphInfo[];
  nodesets: NodesetInfo[];
  initial: RunForm;
  fromRun: { id: string; name: string | null } | null;
}) {
  const [form, setForm] = useState<RunForm>(initial);
  const [errors, setErrors] = useState<{ byField: Partial<Record<StartField, string>>; general: string[] }>({ byField: {}, general: [] });
  const [busy, setBusy] = useState(false);

  const graph = graphs.find((g) => g.name === form.graphName);
  const nodeIds = useMemo(() => graph?.nodes.map((n) => n.id) ?? [], [graph]);
  const overrides = checkOverrides(form.overrides, nodeIds);
  const declared = useMemo(() => declaredChoices(graph, nodesets), [graph, nodesets]);
  const choices = useEpisodeChoices(form.graphName, form.dataset, form.split, declared);

  const set = <K extends keyof RunForm>(k: K, v: RunForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    if (errors.byField[k as StartField]) setErrors((e) => ({ ...e, byField: { ...e.byField, [k]: undefined } }));
  };

  const submit = async (ev: React.FormEvent) => {
    ev.preventDefault();
    if (!overrides.ok) {
      setErrors({ byField: { overrides: overrides.error }, general: [] });
      return;
    }
    const input = toStartEvalInput(form, overrides.value);
    setBusy(true);
    setErrors({ byField: {}, general: [] });
    try {
      const d = await gql(START_EVAL, { input });
      navigate(href.run(d.startEval.runId));
    } catch (err) {
      setErrors(err instanceof GraphQLRequestError ? splitErrors(err.errors) : { byField: {}, general: [String(err)] });
    } finally {
      setBusy(false);
    }
  };

  const fe = errors.byField;
  return (
    <div className="page">
      <header className="page-head">
        <h1>New run</h1>
        {fromRun && (
          <p className="muted" data-testid="run-again-from">
            Every field starts as in run <a href={href.run(fromRun.id)}>{fromRun.name ?? fromRun.id}</a>.
          </p>
        )}
      </header>
      <div className="split">
        <form className="panel form" onSubmit={submit} noValidate data-testid="new-run-form">
          {errors.general.length > 0 && (
            <div className="state state-error" role="alert" data-testid="form-error">
              <strong>The run was not started</strong>
              {errors.general.map((m) => (
                <p key={m}>{m}</p>
              ))}
            </div>
          )}
          <div className="row">
            <Field name="name" label="Name" error={fe.name} hint="tells this run apart in the list">
              <input name="name" value={form.name} onChange={(e) => set('name', e.target.value)} />
            </Field>
            <Field name="tags" label="Tags" error={fe.tags} hint="comma-separated">
              <input name="tags" value={form.tags} onChange={(e) => set('tags', e.target.value)} />
            </Field>
          </div>
          <Field name="graphName" label="Graph" error={fe.graphName}>
            <select name="graphName" value={form.graphName} onChange={(e) => set('graphName', e.target.value)}>
              {graphs.map((g) => (
                <option key={g.name} value={g.name}>
                  {g.name}
                </option>
              ))}
            </select>
          </Field>
          <div className="row">
            <Field name="episodeCount" label="Episodes" error={fe.episodeCount}>
              <input
                name="episodeCount"
                inputMode="numeric"
                value={form.episodeCount}
                onChange={(e) => set('episodeCount', e.target.value)}
              />
            </Field>
            <Field name="workerCount" label="Workers" error={fe.workerCount} hint="speed, never results">
              <input name="workerCount" inputMode="numeric" value={form.workerCount} onChange={(e) => set('workerCount', e.target.value)} />
            </Field>
            <Field name="seed" label="Seed" error={fe.seed}>
              <input name="seed" inputMode="numeric" value={form.seed} onChange={(e) => set('seed', e.target.value)} />
            </Field>
          </div>
          <div className="row">
            <Field name="stepBudget" label="Step budget" error={fe.stepBudget} hint="blank: the env's or the graph's">
              <input
                name="stepBudget"
                inputMode="numeric"
                placeholder={stepBudgetPlaceholder(graph?.stepBudget)}
                value={form.stepBudget}
                onChange={(e) => set('stepBudget', e.target.value)}
              />
            </Field>
            <Field name="priority" label="Priority" error={fe.priority} hint="higher runs first">
              <input name="priority" inputMode="numeric" value={form.priority} onChange={(e) => set('priority', e.target.value)} />
            </Field>
            <Field name="episodeOffset" label="First episode index" error={fe.episodeOffset}>
              <input
                name="episodeOffset"
                inputMode="numeric"
                value={form.episodeOffset}
                onChange={(e) => set('episodeOffset', e.target.value)}
              />
            </Field>
            <Field name="repeats" label="Repeats" error={fe.repeats} hint="plays per episode, each with its own seed">
              <input
                name="repeats"
                inputMode="numeric"
                placeholder="1"
                value={form.repeats}
                onChange={(e) => set('repeats', e.target.value)}
              />
            </Field>
          </div>
          <div className="row">
            <Field name="dataset" label="Dataset" error={fe.dataset} hint="blank: the env's default">
              <ChoiceInput name="dataset" choices={choices} value={form.dataset} onChange={(v) => set('dataset', v)} />
            </Field>
            <Field name="split" label="Split" error={fe.split} hint={choicesHint(choices)}>
              <ChoiceInput name="split" choices={choices} value={form.split} onChange={(v) => set('split', v)} />
            </Field>
            <Field name="marginalVramMb" label="GPU memory (MB)" error={fe.marginalVramMb} hint="until calibrated">
              <input
                name="marginalVramMb"
                inputMode="numeric"
                value={form.marginalVramMb}
                onChange={(e) => set('marginalVramMb', e.target.value)}
              />
            </Field>
          </div>
          <div className="row checks">
            <Field name="exclusiveGpu" label="" error={fe.exclusiveGpu}>
              <label className="check">
                <input
                  type="checkbox"
                  name="exclusiveGpu"
                  checked={form.exclusiveGpu}
                  onChange={(e) => set('exclusiveGpu', e.target.checked)}
                />{' '}
                Exclusive GPU
                <span className="muted"> (runs alone)</span>
              </label>
            </Field>
            <Field name="viaSubprocess" label="" error={fe.viaSubprocess}>
              <label className="check">
                <input
                  type="checkbox"
                  name="viaSubprocess"
                  checked={form.viaSubprocess}
                  onChange={(e) => set('viaSubprocess', e.target.checked)}
                />{' '}
                Own process
                <span className="muted"> (off: inside the server)</span>
              </label>
            </Field>
          </div>
          <Field
            name="overrides"
            label="Overrides (JSON: node id → config patch)"
            error={fe.overrides ?? (!overrides.ok ? overrides.error : undefined)}
            hint={overrides.ok && overrides.warning ? `warning: ${overrides.warning}` : undefined}
          >
            <textarea
              name="overrides"
              rows={5}
              spellCheck={false}
              placeholder={`{"${nodeIds[1] ?? nodeIds[0] ?? 'agent'}": {"key": "value"}}`}
              value={form.overrides}
              onChange={(e) => set('overrides', e.target.value)}
            />
          </Field>
          <details className="advanced" open={Boolean(form.perStepTimeoutSec || form.perCallTimeoutSec || form.memoryBudgetMb)}>
            <summary>Time limits and memory budget</summary>
            <div className="row">
              <Field name="perStepTimeoutSec" label="Seconds per step" error={fe.perStepTimeoutSec} hint="blank: the server's default">
                <input
                  name="perStepTimeoutSec"
                  inputMode="decimal"
                  value={form.perStepTimeoutSec}
                  onChange={(e) => set('perStepTimeoutSec', e.target.value)}
                />
              </Field>
              <Field name="perCallTimeoutSec" label="Seconds per host call" error={fe.perCallTimeoutSec}>
                <input
                  name="perCallTimeoutSec"
                  inputMode="decimal"
                  value={form.perCallTimeoutSec}
                  onChange={(e) => set('perCallTimeoutSec', e.target.value)}
                />
              </Field>
              <Field name="memoryBudgetMb" label="Memory budget (MB)" error={fe.memoryBudgetMb}>
                <input
                  name="memoryBudgetMb"
                  inputMode="numeric"
                  value={form.memoryBudgetMb}
                  onChange={(e) => set('memoryBudgetMb', e.target.value)}
                />
              </Field>
            </div>
          </details>
          <Field name="note" label="Note" error={fe.note}>
            <textarea name="note" rows={2} value={form.note} onChange={(e) => set('note', e.target.value)} />
          </Field>
          {Object.keys(form.carried).length > 0 && (
            <p className="muted small" data-testid="carried">
              Also as in that run:{' '}
              {Object.entries(form.carried)
                .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
                .join(', ')}
            </p>
          )}
          <div className="form-actions">
            <button type="submit" className="primary" disabled={busy || !overrides.ok} data-testid="start-run">
              {busy ? 'Starting…' : 'Start run'}
            </button>
            <a className="button" href={href.play(form.graphName)}>
              Play one episode instead
            </a>
          </div>
        </form>
        <section className="panel">
          <h2>{form.graphName}</h2>
          {graph ? <GraphDetails graph={graph} nodesets={nodesets} /> : <Empty>Pick a graph.</Empty>}
        </section>
      </div>
    </div>
  );
}

function Field({
  name,
  label,
  error,
  hint,
  children,
}: {
  name: string;
  label: string;
  error?: string;
  hint?: string;
  children: ReactNode;
}) {
  return (
    <div className={`field${error ? ' has-error' : ''}`} data-field={name}>
      {label ? (
        // biome-ignore lint/a11y/noLabelWithoutControl: the control is the children passed in
        <label>
          <span className="field-label">{label}</span>
          {children}
        </label>
      ) : (
        children
      )}
      {error ? (
        <div className="field-error" role="alert" data-testid={`error-${name}`}>
          {error}
        </div>
      ) : hint ? (
        <div className="field-hint">{hint}</div>
      ) : null}
    </div>
  );
}
