/**
 * A run's evaluation report (GraphQL `Run.report`, report.json) narrowed from JSON: every part
 * is optional, so an older or newer report still shows what it has.
 */

export interface ReportMetric {
  name: string;
  mean: number;
  stderr: number | null;
  count: number;
  min: number | null;
  max: number | null;
  /** 95 % interval: the aggregate's own when it has one, else mean ± 1.96 stderr. */
  low: number | null;
  high: number | null;
  /** How the interval was made (`t`, `bootstrap`, `normal` …), when the report says. */
  method: string | null;
}

export interface ReportEnding {
  status: string;
  count: number;
  rate: number;
}

export interface ReportClassification {
  count: number;
  accuracy: number | null;
  macroF1: number | null;
  perClass: Array<{ label: string; precision: number; recall: number; f1: number; support: number }>;
  confusion: { labels: string[]; predicted: string[]; matrix: number[][] } | null;
}

export interface ReportScorer {
  /** Unique within the report (a scorer may be rescored with twice, with other config). */
  key: string;
  scorer: string;
  rescored: boolean;
  count: number;
  mean: number | null;
  stderr: number | null;
  correct: number | null;
  accuracy: number | null;
  /** Counted plays without a score: in `count`, at 0. */
  unanswered: number | null;
  classification: ReportClassification | null;
}

export interface ReportEpisode {
  index: number;
  episodeId: string;
  status: string;
  score: number | null;
  answer: string | null;
  extracted: string | null;
  target: string | null;
  explanation: string;
}

export interface ReportCost {
  metric: string;
  mean: number;
  total: number;
  count: number;
}

export interface RunReportView {
  episodeCount: number | null;
  episodesDone: number | null;
  metrics: ReportMetric[];
  endings: ReportEnding[];
  infra: { count: number; rate: number } | null;
  failed: number | null;
  retried: { episodes: number; retries: number } | null;
  scorers: ReportScorer[];
  worst: ReportEpisode[];
  best: ReportEpisode[];
  perEpisode: ReportCost[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const objs = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** A target for display: a list of acceptable answers reads "a | b". */
function targetText(v: unknown): string | null {
  if (v == null) return null;
  if (Array.isArray(v)) return v.map(String).join(' | ');
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function metric(m: Obj): ReportMetric | null {
  const name = str(m.name);
  const mean = num(m.mean);
  if (name === null || mean === null) return null;
  // The SE the interval was built from: the clustered one beside a clustered interval (summary.json's `stderr` is always sd/√n).
  const method = str(m.ciMethod);
  const clustered = method === 'clustered-t' || method === 'clustered-logit-t';
  const stderr = (clustered ? num(m.clusteredStderr) : null) ?? num(m.stderr);
  const ownLow = num(m.ci95Low);
  const ownHigh = num(m.ci95High);
  const hasOwn = ownLow !== null && ownHigh !== null;
  return {
    name,
    mean,
    stderr,
    count: num(m.count) ?? 0,
    min: num(m.min),
    max: num(m.max),
    low: hasOwn ? ownLow : stderr !== null ? mean - 1.96 * stderr : null,
    high: hasOwn ? ownHigh : stderr !== null ? mean + 1.96 * stderr : null,
    method: hasOwn ? (method ?? 'reported') : stderr !== null ? 'normal' : null,
  };
}

function classification(c: unknown): ReportClassification | null {
  if (!isObj(c)) return null;
  const conf = isObj(c.confusion) ? c.confusion : null;
  const labels = conf && Array.isArray(conf.labels) ? conf.labels.map(String) : [];
  const predicted = conf && Array.isArray(conf.predicted) ? conf.predicted.map(String) : labels;
  const matrix =
    conf && Array.isArray(conf.matrix) ? conf.matrix.map((row) => (Array.isArray(row) ? row.map((x) => num(x) ?? 0) : [])) : [];
  return {
    count: num(c.count) ?? 0,
    accuracy: num(c.accuracy),
    macroF1: num(c.macroF1),
    perClass: objs(c.perClass).map((p) => ({
      label: String(p.label ?? ''),
      precision: num(p.precision) ?? 0,
      recall: num(p.recall) ?? 0,
      f1: num(p.f1) ?? 0,
      support: num(p.support) ?? 0,
    })),
    confusion: conf && labels.length ? { labels, predicted, matrix } : null,
  };
}

function episode(e: Obj): ReportEpisode | null {
  const index = num(e.index);
  if (index === null) return null;
  return {
    index,
    episodeId: str(e.episodeId) ?? String(index),
    status: str(e.status) ?? '',
    score: num(e.score),
    answer: e.answer == null ? null : String(e.answer),
    extracted: e.extracted == null ? null : String(e.extracted),
    target: targetText(e.target),
    explanation: str(e.explanation) ?? '',
  };
}

const notNull = <T>(v: T | null): v is T => v !== null;

/** The report, or null when the value is not one (absent, or not an object). */
export function readReport(v: unknown): RunReportView | null {
  if (!isObj(v)) return null;
  const infra = isObj(v.infrastructureFailures) ? v.infrastructureFailures : null;
  const retried = isObj(v.retried) ? v.retried : null;
  return {
    episodeCount: num(v.episodeCount),
    episodesDone: num(v.episodesDone),
    metrics: objs(v.metrics).map(metric).filter(notNull),
    endings: objs(v.endings).map((e) => ({ status: String(e.status ?? ''), count: num(e.count) ?? 0, rate: num(e.rate) ?? 0 })),
    infra: infra ? { count: num(infra.count) ?? 0, rate: num(infra.rate) ?? 0 } : null,
    failed: num(v.failed),
    retried: retried ? { episodes: num(retried.episodes) ?? 0, retries: num(retried.retries) ?? 0 } : null,
    scorers: objs(v.scorers).map((s, i) => ({
      key: `${String(s.scorer ?? '?')}#${i}`,
      scorer: String(s.scorer ?? '?'),
      rescored: s.rescored === true,
      count: num(s.count) ?? 0,
      mean: num(s.mean),
      stderr: num(s.stderr),
      correct: num(s.correct),
      accuracy: num(s.accuracy),
      // Reports written before the rule had `unscored` (then left out of count and accuracy).
      unanswered: num(s.unanswered ?? s.unscored),
      classification: classification(s.classification),
    })),
    worst: objs(v.worst).map(episode).filter(notNull),
    best: objs(v.best).map(episode).filter(notNull),
    perEpisode: objs(v.perEpisode).flatMap((c) => {
      const metricName = str(c.metric);
      const mean = num(c.mean);
      return metricName !== null && mean !== null ? [{ metric: metricName, mean, total: num(c.total) ?? 0, count: num(c.count) ?? 0 }] : [];
    }),
  };
}
