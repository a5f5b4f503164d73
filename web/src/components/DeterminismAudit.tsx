/**
 * The run's determinism badge: its latest audit (a seeded sample of its episodes re-played at
 * another worker count) as "verified at W workers on N episodes" or "failed" with the fields that
 * differ, and a button that starts an audit. An audit's own scratch run links back to its run.
 */
import { useEffect, useState } from 'react';
import { gql } from '../api/client.js';
import { graphql } from '../api/graphql.js';
import { href } from '../hooks/useHashRoute.js';
import { useAction } from '../hooks/useAction.js';
import { useQuery } from '../hooks/useQuery.js';

export const RUN_AUDIT = graphql(`
  query RunAudit($id: ID!) {
    run(id: $id) {
      id
      status
      auditOf
      audit {
        status passed auditRunId requestedAt finishedAt sample workerCount originalWorkerCount episodesCompared notes
        diffs { index episodeId moreFields fields { path original audit } }
        error { code message }
      }
    }
  }
`);

export const AUDIT_RUN = graphql(`
  mutation AuditRun($id: ID!) {
    auditRun(id: $id) { status auditRunId }
  }
`);

const GREEN = '#1a7f37';
const RED = '#cf222e';
const GREY = '#6e7781';

const show = (v: unknown) => (v === null || v === undefined ? '(absent)' : JSON.stringify(v));
const FINISHED = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'ABORTED']);

export function DeterminismAudit({ runId, runStatus }: { runId: string; runStatus: string }) {
  const [running, setRunning] = useState(false);
  const q = useQuery(RUN_AUDIT, { id: runId }, { pollMs: running ? 1000 : 0 });
  const { busy, error, run: act } = useAction();
  const run = q.data?.run;
  const audit = run?.audit ?? null;
  const isRunning = audit?.status === 'RUNNING';
  // Polled only while an audit runs: its verdict comes when its scratch run ends.
  useEffect(() => setRunning(isRunning), [isRunning]);

  if (!run) return null;
  if (run.auditOf) {
    return (
      <section className="panel audit-panel" data-testid="determinism-audit">
        <span className="badge" style={{ '--badge': GREY } as React.CSSProperties}>
          determinism audit
        </span>{' '}
        This run re-plays a sample of run{' '}
        <a className="mono" href={href.run(run.auditOf)}>
          {run.auditOf}
        </a>{' '}
        at another worker count; the verdict is shown there.
      </section>
    );
  }

  const start = () =>
    act(async () => {
      await gql(AUDIT_RUN, { id: runId });
      q.refetch();
    });

  const canStart = FINISHED.has(runStatus) && !isRunning;
  let badge: { text: string; color: string; status: string };
  if (!audit) badge = { text: 'determinism: not audited', color: GREY, status: 'NONE' };
  else if (audit.status === 'PASSED') {
    const workers = `${audit.workerCount} worker${audit.workerCount === 1 ? '' : 's'}`;
    const episodes = `${audit.episodesCompared} episode${audit.episodesCompared === 1 ? '' : 's'}`;
    // At the run's own worker count a pass shows the episodes replay, not that the worker count leaves them unchanged.
    const text =
      audit.workerCount === audit.originalWorkerCount
        ? `determinism: replays at the run's own ${workers} on ${episodes} (the worker count not checked)`
        : `determinism: verified at ${workers} on ${episodes}`;
    badge = { text, color: GREEN, status: audit.status };
  } else if (audit.status === 'FAILED') badge = { text: 'determinism: failed', color: RED, status: audit.status };
  else if (audit.status === 'ERROR') badge = { text: 'determinism: no verdict', color: GREY, status: audit.status };
  else badge = { text: 'determinism: audit running…', color: GREY, status: audit.status };

  return (
    <section className="panel audit-panel" data-testid="determinism-audit">
      <div className="audit-head">
        <span
          className="badge"
          data-testid="determinism-badge"
          data-audit-status={badge.status}
          style={{ '--badge': badge.color } as React.CSSProperties}
          title={audit ? `episodes ${audit.sample.join(', ')}; the run used ${audit.originalWorkerCount} worker(s)` : undefined}
        >
          {badge.text}
        </span>
        {audit && (
          <span className="muted small">
            {audit.sample.length} sampled episode{audit.sample.length === 1 ? '' : 's'} re-played as run{' '}
            <a className="mono" href={href.run(audit.auditRunId)}>
              {audit.auditRunId}
            </a>
          </span>
        )}
        {canStart && (
          <button type="button" className="small" disabled={busy} onClick={start} data-testid="start-audit">
            {busy ? 'Starting…' : audit ? 'Audit again' : 'Audit determinism'}
          </button>
        )}
        {error && (
          <span className="inline-error" role="alert">
            {error}
          </span>
        )}
      </div>
      {audit?.status === 'ERROR' && audit.error && <p className="muted">{audit.error.message}</p>}
      {audit?.status === 'FAILED' && (
        <div className="table-wrap" data-testid="audit-diff">
          <table className="grid compact">
            <thead>
              <tr>
                <th>episode</th>
                <th>field</th>
                <th>in the run</th>
                <th>re-played</th>
              </tr>
            </thead>
            <tbody>
              {audit.diffs.flatMap((d) => [
                ...d.fields.map((f, i) => (
                  <tr key={`${d.index}:${f.path}`}>
                    <td>{i === 0 ? `${d.index} (${d.episodeId})` : ''}</td>
                    <td className="mono">{f.path}</td>
                    <td className="mono small">{show(f.original)}</td>
                    <td className="mono small">{show(f.audit)}</td>
                  </tr>
                )),
                ...(d.moreFields > 0
                  ? [
                      <tr key={`${d.index}:more`}>
                        <td />
                        <td className="muted" colSpan={3}>
                          … {d.moreFields} more field{d.moreFields === 1 ? '' : 's'}
                        </td>
                      </tr>,
                    ]
                  : []),
              ])}
            </tbody>
          </table>
        </div>
      )}
      {audit && audit.notes.length > 0 && <p className="muted small">{audit.notes.join('; ')}</p>}
    </section>
  );
}
