/**
 * A run's labels (name, tags, note) with an editor, and its full spec: what it was started with,
 * the frozen graph included. Edits go through updateRun into the run dir's labels.json.
 */
import { useState } from 'react';
import { gql, GraphQLRequestError } from '../api/client.js';
import { RUN_SPEC, UPDATE_RUN } from '../api/queries.js';
import { href } from '../hooks/useHashRoute.js';
import { useQuery } from '../hooks/useQuery.js';
import { Json } from './Json.js';
import { ErrorBox, Loading } from './States.js';

export function RunAbout({ runId, onEdited }: { runId: string; onEdited?: () => void }) {
  const q = useQuery(RUN_SPEC, { id: runId });
  const [editing, setEditing] = useState(false);
  const run = q.data?.run;
  if (!run) {
    if (q.error) return <ErrorBox error={q.error} title="The run's spec could not be loaded" onRetry={q.refetch} />;
    return <Loading what="Loading the spec" />;
  }
  return (
    <section className="panel run-about" data-testid="run-about">
      <div className="panel-head">
        <h2>About this run</h2>
        {!editing && (
          <button type="button" className="small" onClick={() => setEditing(true)} data-testid="edit-labels">
            Edit name, tags, note
          </button>
        )}
      </div>
      {editing ? (
        <LabelsEditor
          run={run}
          onDone={(saved) => {
            setEditing(false);
            if (saved) {
              q.refetch();
              onEdited?.();
            }
          }}
        />
      ) : (
        <dl className="labels">
          <dt>name</dt>
          <dd data-testid="run-name">{run.name ?? <span className="muted">none</span>}</dd>
          <dt>tags</dt>
          <dd data-testid="run-tags">
            {run.tags.length === 0 ? (
              <span className="muted">none</span>
            ) : (
              run.tags.map((t) => (
                <a key={t} className="tag-chip" href={href.runs({ tag: t })}>
                  {t}
                </a>
              ))
            )}
          </dd>
          <dt>note</dt>
          <dd data-testid="run-note" className="note">
            {run.note ?? <span className="muted">none</span>}
          </dd>
        </dl>
      )}
      <details data-testid="run-spec">
        <summary>Spec (everything the run was started with)</summary>
        <Json value={run.spec} />
      </details>
    </section>
  );
}

function LabelsEditor({
  run,
  onDone,
}: {
  run: { id: string; name: string | null; tags: string[]; note: string | null };
  onDone(saved: boolean): void;
}) {
  const [name, setName] = useState(run.name ?? '');
  const [tags, setTags] = useState(run.tags.join(', '));
  const [note, setNote] = useState(run.note ?? '');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (ev: React.FormEvent) => {
    ev.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const list = tags
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      await gql(UPDATE_RUN, { id: run.id, name: name.trim() || null, tags: list, note: note.trim() ? note : null });
      onDone(true);
    } catch (err) {
      setError(err instanceof GraphQLRequestError ? err.errors.map((e) => e.message).join('; ') : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="form labels-form" onSubmit={save} data-testid="labels-form">
      {error && (
        <div className="state state-error" role="alert">
          {error}
        </div>
      )}
      <div className="row">
        <label className="field">
          <span className="field-label">Name</span>
          <input name="name" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label className="field">
          <span className="field-label">Tags (comma-separated)</span>
          <input name="tags" value={tags} onChange={(e) => setTags(e.target.value)} />
        </label>
      </div>
      <label className="field">
        <span className="field-label">Note</span>
        <textarea name="note" rows={3} value={note} onChange={(e) => setNote(e.target.value)} />
      </label>
      <div className="form-actions">
        <button type="submit" className="primary" disabled={busy} data-testid="save-labels">
          {busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
