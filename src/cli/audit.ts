/**
 * `evalctl audit <run> [--sample N] [--workers W] [--server URL] [--token T] [--json]`: asks a
 * server for the determinism audit of a finished run (auditRun), follows its scratch run to the
 * end and prints the verdict: the diff when it failed, and a note when the re-play used the run's
 * own worker count (accepted: it still checks that the run replays, only not worker-count
 * independence). Exit 0 when verified, 1 when the records differ or there is no verdict, 2 for
 * bad input. The token comes from `--token` or EVAL_API_TOKEN.
 */
import { BadInputError } from '../errors.js';
import { intFlag, parseCommandArgs } from './args.js';
import { RemoteServer } from './remote-run.js';

const USAGE = 'usage: evalctl audit <run> [--sample N] [--workers W] [--server URL] [--token T] [--json]';

/** Where `evalctl serve` listens unless told otherwise. */
export const DEFAULT_SERVER = 'http://127.0.0.1:4000';

const AUDIT_FIELDS = `status passed auditRunId requestedAt finishedAt sample workerCount originalWorkerCount episodesCompared notes
  diffs { index episodeId moreFields fields { path original audit } } error { code message }`;

interface FieldDiff {
  path: string;
  original: unknown;
  audit: unknown;
}

interface AuditAnswer {
  status: 'RUNNING' | 'PASSED' | 'FAILED' | 'ERROR';
  auditRunId: string;
  sample: number[];
  workerCount: number;
  originalWorkerCount: number;
  episodesCompared: number;
  notes: string[];
  diffs: Array<{ index: number; episodeId: string; moreFields: number; fields: FieldDiff[] }>;
  error: { code: string; message: string } | null;
}

const show = (v: unknown): string => (v === null || v === undefined ? '(absent)' : JSON.stringify(v));

/**
 * Said when the re-play used the run's own worker count (asked for, or the sample had too few
 * episodes for another): the audit then shows that the run replays, not that its worker count
 * leaves the records unchanged.
 */
export function sameWorkersNote(a: Pick<AuditAnswer, 'workerCount' | 'originalWorkerCount'>): string | null {
  if (a.workerCount !== a.originalWorkerCount) return null;
  return `re-played at the run's own worker count (${a.workerCount}): this checks that its episodes replay to the same records, not that the worker count leaves them unchanged; for that, audit at another --workers with a --sample of at least that many episodes`;
}

/** The verdict in a few lines: the badge's words, then each differing episode with its fields. */
export function renderAudit(runId: string, a: AuditAnswer): string {
  const lines: string[] = [];
  if (a.status === 'PASSED') {
    lines.push(`determinism: verified at ${a.workerCount} worker(s) on ${a.episodesCompared} episode(s) of run ${runId}`);
  } else if (a.status === 'FAILED') {
    lines.push(
      `determinism: FAILED at ${a.workerCount} worker(s): ${a.diffs.length} of ${a.sample.length} episode(s) of run ${runId} gave other records`,
    );
    for (const d of a.diffs) {
      lines.push(`  episode ${d.index} (${d.episodeId}):`);
      for (const f of d.fields) lines.push(`    ${f.path}: ${show(f.original)} → ${show(f.audit)}`);
      if (d.moreFields > 0) lines.push(`    … ${d.moreFields} more field(s)`);
    }
  } else if (a.status === 'ERROR') {
    lines.push(`determinism: no verdict for run ${runId}: ${a.error?.message ?? 'the audit did not complete'}`);
  } else {
    lines.push(`determinism: audit of run ${runId} still running (run ${a.auditRunId})`);
  }
  const same = a.status === 'ERROR' ? null : sameWorkersNote(a);
  for (const n of same === null ? a.notes : [same, ...a.notes]) lines.push(`note: ${n}`);
  return lines.join('\n') + '\n';
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    argv,
    {
      sample: { type: 'string' },
      workers: { type: 'string' },
      server: { type: 'string' },
      token: { type: 'string' },
    },
    USAGE,
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (positionals.length !== 1)
    throw new BadInputError(positionals.length === 0 ? `missing the run id; ${USAGE}` : `expected one run id; ${USAGE}`);
  const runId = positionals[0]!;
  const sample = intFlag('sample', values.sample, 1);
  const workerCount = intFlag('workers', values.workers, 1);
  const url = values.server ?? DEFAULT_SERVER;
  if (!/^https?:\/\/[^/]/.test(url)) throw new BadInputError(`--server must be an http(s) URL, got "${url}"`);
  const server = new RemoteServer({ server: url, token: values.token ?? (process.env.EVAL_API_TOKEN || undefined) });

  const started = await server.gql<{ auditRun: AuditAnswer }>(
    `mutation($id: ID!, $sample: Int, $workerCount: Int) { auditRun(id: $id, sample: $sample, workerCount: $workerCount) { ${AUDIT_FIELDS} } }`,
    { id: runId, sample: sample ?? null, workerCount: workerCount ?? null },
  );
  const a = started.auditRun;
  if (values.json !== true)
    process.stderr.write(
      `audit of run ${runId}: ${a.sample.length} episode(s) re-played at ${a.workerCount} worker(s) (the run used ${a.originalWorkerCount}${a.workerCount === a.originalWorkerCount ? ': a replay check only' : ''}) as run ${a.auditRunId} on ${server.base}\n`,
    );
  // Follow the scratch run to its end, then read the verdict (the server compares when it sees the end).
  for await (const _state of server.progress(a.auditRunId)) {
    // only the end matters here
  }
  let verdict = a;
  for (let i = 0; i < 50; i++) {
    const data = await server.gql<{ run: { audit: AuditAnswer | null } }>(
      `query($id: ID!) { run(id: $id) { audit { ${AUDIT_FIELDS} } } }`,
      {
        id: runId,
      },
    );
    if (data.run.audit) verdict = data.run.audit;
    if (verdict.status !== 'RUNNING') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  process.stdout.write(values.json === true ? JSON.stringify(verdict, null, 2) + '\n' : renderAudit(runId, verdict));
  return verdict.status === 'PASSED' ? 0 : 1;
}
