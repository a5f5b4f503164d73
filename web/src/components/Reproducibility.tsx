/** A run's manifest: what it was made from (project commit, hashes of graph, nodesets and dataset files, runtime). */
import { useState } from 'react';
import { graphql } from '../api/graphql.js';
import { useQuery } from '../hooks/useQuery.js';
import { ErrorBox, Loading } from './States.js';

export const RUN_MANIFEST = graphql(`
  query RunManifest($id: ID!) {
    run(id: $id) {
      id
      manifest {
        projectVersion gitCommit graphSha256 nodeVersion platform arch
        nodesets { name source manifestSha256 codeSha256 codeFiles }
        dataset { name source split sha256 files { path sha256 bytes } }
      }
    }
  }
`);

const short = (h: string | null | undefined) => (h ? h.slice(0, 12) : '–');

/** Collapsed by default; the manifest is fetched the first time it is opened. */
export function Reproducibility({ runId }: { runId: string }) {
  const [opened, setOpened] = useState(false);
  return (
    <section className="panel" data-testid="reproducibility">
      <details onToggle={(e) => e.currentTarget.open && setOpened(true)}>
        <summary>
          <h2 style={{ display: 'inline' }}>Reproducibility</h2>
        </summary>
        {opened && <ManifestBody runId={runId} />}
      </details>
    </section>
  );
}

function ManifestBody({ runId }: { runId: string }) {
  const q = useQuery(RUN_MANIFEST, { id: runId });
  if (q.error) return <ErrorBox error={q.error} title="The manifest could not be loaded" onRetry={q.refetch} />;
  if (q.loading) return <Loading what="Loading the manifest" />;
  const m = q.data?.run?.manifest;
  if (!m) return <p className="muted">This run has no manifest (it was recorded before runs had one).</p>;
  return (
    <div data-testid="manifest">
      <p>
        version <b>{m.projectVersion}</b> · commit <span className="mono">{short(m.gitCommit)}</span> · Node {m.nodeVersion} · {m.platform}/
        {m.arch} · graph{' '}
        <span className="mono" title={m.graphSha256}>
          {short(m.graphSha256)}
        </span>
      </p>
      <div className="table-wrap">
        <table className="grid compact">
          <thead>
            <tr>
              <th>nodeset</th>
              <th>source</th>
              <th>manifest</th>
              <th>code</th>
            </tr>
          </thead>
          <tbody>
            {m.nodesets.map((n) => (
              <tr key={n.name}>
                <td>{n.name}</td>
                <td className="muted">{n.source}</td>
                <td className="mono small" title={n.manifestSha256}>
                  {short(n.manifestSha256)}
                </td>
                <td className="mono small" title={n.codeSha256 ?? ''}>
                  {short(n.codeSha256)} {n.codeFiles != null && <span className="muted">({n.codeFiles} files)</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {m.dataset && (
        <p>
          dataset <b>{m.dataset.name}</b>
          {m.dataset.split && <>/{m.dataset.split}</>} ({m.dataset.source}) ·{' '}
          <span className="mono" title={m.dataset.sha256}>
            {short(m.dataset.sha256)}
          </span>{' '}
          · {m.dataset.files.map((f) => `${f.path} (${f.bytes} B)`).join(', ')}
        </p>
      )}
    </div>
  );
}
