/** The names of a run directory's files (store/run-dir.ts has the layout and its readers and writers). */
export const FILES = {
  spec: 'spec.json',
  sharedUrls: 'shared_urls.json',
  graph: 'graph.json',
  summary: 'summary.json',
  /** The SHA-256 of the terminal summary.json and the state it recorded (store/summary-digest.ts). */
  summaryDigest: 'summary.sha256.json',
  stdout: 'stdout.log',
  stderr: 'stderr.log',
  done: '_DONE',
  process: 'process.json',
  episodes: 'episodes',
  /** A stopWhen run's baseline scores, frozen at submit (compare/frozen-baseline.ts). */
  baselineScores: 'baseline-scores.json',
  /** The episode records, one JSON line each, appended as episodes finish (store/records-file.ts). */
  records: 'records.jsonl',
} as const;
