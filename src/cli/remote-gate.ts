/** `evalctl gate --server URL`: the verdicts from the server's `gate` query, in the shape a local gate gives. */
import type { GateQuestion, GateVerdict } from '../compare/gate-requirement.js';
import type { GateResult, MetricGateVerdict } from '../compare/gate-verdicts.js';
import { RemoteServer } from './remote-run.js';

const QUERY = `query Gate($b: ID!, $c: ID!, $r: [String!], $alpha: Float) {
  gate(baseline: $b, candidate: $c, requirements: $r, alpha: $alpha) {
    verdict alpha correction notes baseline { id } candidate { id }
    metrics { metric requirement question margin goal verdict decidedAt n excludedPairs baselineMean candidateMean meanDiff
      intervalLow intervalHigh method level mde episodesNeeded reason }
  }
}`;

type Upper<T extends string> = Uppercase<T>;
interface RemoteMetric extends Omit<MetricGateVerdict, 'question' | 'goal' | 'verdict' | 'method' | 'interval'> {
  question: Upper<GateQuestion> | 'NON_INFERIORITY';
  goal: 'MAX' | 'MIN' | null;
  verdict: Upper<GateVerdict>;
  method: 'BETTING' | 'ASYMPTOTIC';
  intervalLow: number | null;
  intervalHigh: number | null;
}
interface RemoteGate {
  verdict: Upper<GateVerdict>;
  alpha: number;
  notes: string[];
  baseline: { id: string };
  candidate: { id: string };
  metrics: RemoteMetric[];
}

const lower = <T extends string>(v: string): T => v.toLowerCase().replace('_', '-') as T;

export async function remoteGate(opts: {
  server: string;
  token: string | undefined;
  baseline: string;
  candidate: string;
  requirements: readonly string[];
  alpha: number | undefined;
}): Promise<GateResult> {
  const api = new RemoteServer({ server: opts.server, token: opts.token });
  const { gate } = await api.gql<{ gate: RemoteGate }>(QUERY, {
    b: opts.baseline,
    c: opts.candidate,
    r: opts.requirements.length > 0 ? opts.requirements : null,
    alpha: opts.alpha ?? null,
  });
  return {
    baselineRunId: gate.baseline.id,
    candidateRunId: gate.candidate.id,
    alpha: gate.alpha,
    correction: 'holm',
    verdict: lower<GateVerdict>(gate.verdict),
    notes: gate.notes,
    metrics: gate.metrics.map(({ intervalLow, intervalHigh, ...m }) => ({
      ...m,
      question: lower<GateQuestion>(m.question),
      goal: m.goal === null ? null : lower<'max' | 'min'>(m.goal),
      verdict: lower<GateVerdict>(m.verdict),
      method: lower<'betting' | 'asymptotic'>(m.method),
      interval: intervalLow !== null && intervalHigh !== null ? [intervalLow, intervalHigh] : null,
    })),
  };
}
