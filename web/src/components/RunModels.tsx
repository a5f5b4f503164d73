/** The run page's models: per model-backed node what it asked (model, endpoint, sampling) and what the provider said answered. */
import type { RunModel } from '../api/fragments.js';

const sampling = (s: unknown): string =>
  typeof s === 'object' && s !== null
    ? Object.entries(s as Record<string, unknown>)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(', ')
    : '';

export function RunModels({ models }: { models: readonly RunModel[] }) {
  if (models.length === 0) return null;
  return (
    <section className="panel" data-testid="run-models">
      <h2>Models</h2>
      <table className="grid compact">
        <thead>
          <tr>
            <th>node</th>
            <th>model asked</th>
            <th>endpoint</th>
            <th>sampling</th>
            <th title="What the provider named in its answers, with its system_fingerprint and how many answers">answered by</th>
          </tr>
        </thead>
        <tbody>
          {models.map((m) => (
            <tr key={m.node}>
              <td>{m.node}</td>
              <td>{m.model}</td>
              <td>{m.baseUrl}</td>
              <td>{sampling(m.sampling) || '–'}</td>
              <td>
                {m.reported.length === 0
                  ? '–'
                  : m.reported.map((r) => `${r.model}${r.systemFingerprint ? ` (${r.systemFingerprint})` : ''} ×${r.calls}`).join(', ')}
                {m.repeatsNote && <div className="muted">repeats: {m.repeatsNote}</div>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
