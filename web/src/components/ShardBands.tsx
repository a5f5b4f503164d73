/** A scale-out run's shards as small bands: episode range, state, worker and episodes committed, coloured by state. */
import type { CSSProperties } from 'react';
import { RUN_SHARDS, type ShardRow } from '../api/queries.js';
import { useQuery } from '../hooks/useQuery.js';

export const SHARD_STATES = ['WAITING', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;

export const SHARD_STATE_COLORS: Record<(typeof SHARD_STATES)[number], string> = {
  WAITING: '#7c8799',
  RUNNING: '#2f7de1',
  COMPLETED: '#23a26d',
  FAILED: '#d64545',
  CANCELLED: '#9a6b2f',
};

const shardColor = (s: string): string => (SHARD_STATE_COLORS as Record<string, string>)[s] ?? '#8a94a6';

/** Polls the run's shards while it is live; draws nothing for a run that is not on the fleet (`shards` null). */
export function ShardBands({ runId, live }: { runId: string; live: boolean }) {
  // Shard state lives in Redis and in the head's commit ledger; no subscription carries it, so poll.
  const q = useQuery(RUN_SHARDS, { id: runId }, { pollMs: 2000, skip: !live });
  const shards = live ? q.data?.run?.shards : null;
  if (!shards) return null;
  const counts = new Map<string, number>();
  for (const s of shards) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
  return (
    <section className="panel" data-testid="shard-bands" aria-labelledby="shard-bands-title">
      <h2 id="shard-bands-title">
        Shards <span className="muted">({shards.length} on the workers)</span>
      </h2>
      <ul className="legend shard-legend" aria-label="Shard states">
        {SHARD_STATES.map((s) => (
          <li key={s} className="legend-item">
            <i style={{ background: shardColor(s) }} aria-hidden />
            {s.toLowerCase()} <b>{counts.get(s) ?? 0}</b>
          </li>
        ))}
      </ul>
      <ol className="shard-bands">
        {shards.map((s) => (
          <ShardBand key={s.index} shard={s} />
        ))}
      </ol>
    </section>
  );
}

function ShardBand({ shard: s }: { shard: ShardRow }) {
  const total = s.end - s.first;
  const pct = total > 0 ? Math.min(100, (s.committed / total) * 100) : 0;
  return (
    <li className="shard-band" data-shard={s.index} data-state={s.state} style={{ '--shard': shardColor(s.state) } as CSSProperties}>
      <div className="shard-bar" aria-hidden>
        <div className="shard-fill" style={{ width: `${pct}%` }} />
      </div>
      <div className="shard-text small">
        <b>#{s.index}</b>{' '}
        <span className="mono">
          {s.first}–{s.end - 1}
        </span>{' '}
        · {s.state.toLowerCase()} · {s.worker ?? 'no worker yet'} ·{' '}
        <span className="mono">
          {s.committed}/{total}
        </span>
        {s.attempts > 1 && <span className="muted"> · attempt {s.attempts}</span>}
      </div>
    </li>
  );
}
