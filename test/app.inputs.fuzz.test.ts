/**
 * Generated variables for the API's mutations and queries, sent to a real server on port 0: every
 * answer is JSON, and every error carries a code a client can act on (never INTERNAL_SERVER_ERROR,
 * never an HTTP 500). Admission sees a machine of 1 MB, so an accepted run only queues; each one
 * is cancelled at once, and the queue holds three.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedSampler } from './fixtures/fixed-sampler.js';
import { attemptAsync, fuzzParamsAsync, nastyKey, nastyNumber, nastyString, nastyValue, reportFuzz } from './support/fuzz.js';
import { startServer, type GqlResult, type TestServer } from './app.helpers.js';

const startedAt = Date.now();
let server: TestServer;
/** Run and sweep ids the server gave, for later operations to name. */
const runIds: string[] = [];
const sweepIds: string[] = [];
/** "operation code" (or "operation ok") → how many answers. */
const outcomes = new Map<string, number>();

beforeAll(async () => {
  server = await startServer({ scheduler: { sampler: new FixedSampler({ ramTotalMb: 1, ramFreeMb: 1 }), queueCapacity: 3 } });
});
afterAll(async () => {
  try {
    // Nothing may have started: admission saw no room for any run.
    expect((await server.gql('{ activeJobs { runId } }')).data?.activeJobs).toEqual([]);
  } finally {
    await server.stop();
    reportFuzz('GraphQL inputs', startedAt);
    // What the generated calls got, so a reader sees that accepted runs and every kind of refusal were reached.
    process.stdout.write(
      `[fuzz] GraphQL outcomes: ${[...outcomes]
        .sort()
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}\n`,
    );
  }
});

/** A call, and the cancel of what it queued, end within this on a loaded machine. */
const CALL_LIMIT_MS = 8000;

/** POSTs `body` as it is (a string is sent unchanged, so duplicate keys and odd bytes reach the server). */
async function post(body: string): Promise<{ status: number; json: GqlResult }> {
  const res = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let json: GqlResult;
  try {
    json = JSON.parse(text) as GqlResult;
  } catch {
    throw new Error(`HTTP ${res.status} answered with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  return { status: res.status, json };
}

/** Every error names a code other than INTERNAL_SERVER_ERROR and says something; no HTTP 500. */
function checkAnswer(status: number, json: GqlResult, what: string): void {
  const where = `${what} → HTTP ${status} ${JSON.stringify(json).slice(0, 400)}`;
  if (status >= 500) throw new Error(`server error: ${where}`);
  for (const e of json.errors ?? []) {
    const code = e.extensions?.code;
    if (typeof code !== 'string' || code === 'INTERNAL_SERVER_ERROR') throw new Error(`uncoded error: ${where}`);
    if (typeof e.message !== 'string' || e.message.trim().length < 5) throw new Error(`error without a message: ${where}`);
    if (/\bat .*\.(?:ts|js):\d+/.test(e.message)) throw new Error(`a stack trace in the answer: ${where}`);
    // A refused run field is named in the message as in extensions.field; a range the env's panel refuses speaks of its episodes.
    const field = e.extensions?.field;
    const head = typeof field === 'string' ? field.split('.')[0]! : '';
    const named = e.message.includes(head) || (/^episode(Offset|Count)$/.test(head) && /\bepisodes?\b/.test(e.message));
    if (head !== '' && !named) throw new Error(`the message does not name field ${String(field)}: ${where}`);
  }
  if (json.errors === undefined && json.data === undefined) throw new Error(`neither data nor errors: ${where}`);
}

async function call(query: string, variables: Record<string, unknown>): Promise<GqlResult> {
  let body: string;
  try {
    body = JSON.stringify({ query, variables });
  } catch {
    return {}; // a generated value JSON cannot carry (nested past the stack): no request to send
  }
  const { status, json } = await post(body);
  checkAnswer(status, json, `${query.slice(0, 60)} with ${body.slice(0, 300)}`);
  const outcome = `${/\{\s*(\w+)/.exec(query)?.[1]} ${json.errors ? String(json.errors[0]?.extensions?.code) : 'ok'}`;
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  return json;
}

const GRAPHS = ['gridnav_random', 'gridnav_planner', 'qa_llm', 'no_such_graph'];
const runId = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined).map(() => runIds[runIds.length - 1] ?? '20260101_000000') },
  { weight: 2, arbitrary: fc.constantFrom('20260101_000000', '20261301_256199_9', '../../etc', '20260101_000000/../x', '') },
  { weight: 1, arbitrary: nastyString },
  { weight: 1, arbitrary: nastyValue },
);
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 3 });
const anyInt = fc.oneof(fc.integer({ min: -5, max: 100 }), nastyNumber, fc.integer());
const overrides = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      {},
      { agent: { epsilon: 0.3 } },
      { agent: { epsilon: 'x' } },
      { nope: {} },
      { env: { dataset: 'constructor' } },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.dictionary(
      fc.oneof(fc.constantFrom('agent', 'env', 'result'), nastyKey),
      fc.dictionary(nastyKey, nastyValue, { maxKeys: 2 }),
      { maxKeys: 2 },
    ),
  },
  { weight: 1, arbitrary: nastyValue },
);

/** Each StartEvalInput field: a value of its GraphQL type, often in range, or anything at all. */
const fieldValues = {
  graphName: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...GRAPHS) }, nastyString, nastyValue),
  episodeCount: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 5 }) }, anyInt, nastyValue),
  workerCount: fc.oneof(fc.integer({ min: 1, max: 4 }), anyInt),
  seed: anyInt,
  stepBudget: anyInt,
  perStepTimeoutSec: fc.oneof(fc.constantFrom(0.5, 10), nastyNumber),
  perCallTimeoutSec: nastyNumber,
  priority: anyInt,
  exclusiveGpu: fc.oneof(fc.boolean(), nastyValue),
  marginalVramMb: anyInt,
  memoryBudgetMb: anyInt,
  viaSubprocess: fc.boolean(),
  overrides,
  dataset: fc.oneof(fc.constantFrom('mini', 'standard', 'constructor', '__proto__', 'toString', 'arith', '../x'), nastyString),
  split: fc.oneof(fc.constantFrom('test', 'val', 'constructor', '__proto__', 'hasOwnProperty'), nastyString),
  episodeOffset: anyInt,
  repeats: anyInt,
  shardSize: anyInt,
  name: nastyString,
  tags: fc.oneof(fc.array(nastyString, { maxLength: 4 }), nastyValue),
  note: nastyString,
  frobnicate: nastyValue,
  __proto__: nastyValue,
};
type Field = keyof typeof fieldValues;
const FIELDS = Object.keys(fieldValues) as Field[];

/** A few of the fields, each with a generated value. */
const someFields = (max: number) =>
  fc.subarray(FIELDS, { maxLength: max }).chain((keys) =>
    fc.tuple(...keys.map((k) => fieldValues[k].map((v) => [k, v] as const))).map((pairs) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of pairs) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      return out;
    }),
  );

/** Mostly a run that could start, with one or two fields generated; otherwise any mix of fields. */
const startEvalInput: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('gridnav_random', 'gridnav_planner'), fc.integer({ min: 1, max: 5 }), someFields(2))
      .map(([graphName, episodeCount, rest]) => ({ graphName, episodeCount, ...rest })),
  },
  { weight: 1, arbitrary: someFields(8) },
);

const START_EVAL = 'mutation($input: StartEvalInput!) { startEval(input: $input) { runId status } }';
const START_SWEEP =
  'mutation($base: StartEvalInput!, $grid: JSON!, $seeds: [Int!]) { startSweep(base: $base, grid: $grid, seeds: $seeds) { id runCount } }';

/** Each operation: a document and a generator of its variables. */
const operations: Array<[string, fc.Arbitrary<Record<string, unknown>>]> = [
  [START_EVAL, startEvalInput.map((input) => ({ input }))],
  [
    START_SWEEP,
    fc.record({
      base: startEvalInput,
      grid: fc.oneof(
        fc.constantFrom({ 'agent.epsilon': [0.1, 0.2] }, { 'agent.epsilon': [0.1, 0.1] }, { 'agent.nope': [1] }, { seed: [1] }),
        fc.dictionary(
          fc.oneof(fc.constantFrom('agent.epsilon', 'env.dataset'), nastyKey),
          fc.oneof(fc.array(nastyValue, { maxLength: 3 }), nastyValue),
          { maxKeys: 8 },
        ),
        nastyValue,
      ),
      seeds: maybe(fc.oneof(fc.array(anyInt, { maxLength: 4 }), nastyValue)),
    }),
  ],
  [
    'query($b: ID!, $c: [ID!]!, $m: [String!]) { compareRuns(baseline: $b, candidates: $c, metrics: $m) { candidates { candidate { id } } } }',
    fc.record({
      b: runId,
      c: fc.oneof(fc.array(runId, { maxLength: 3 }), nastyValue),
      m: maybe(fc.oneof(fc.array(nastyString, { maxLength: 3 }), nastyValue)),
    }),
  ],
  [
    'query($r: ID!, $e: Float, $m: [String!]) { powerPlan(run: $r, effect: $e, metrics: $m) { source metrics { metric n } } }',
    fc.record({ r: runId, e: maybe(nastyNumber), m: maybe(fc.array(nastyString, { maxLength: 3 })) }),
  ],
  ['query($id: ID!) { run(id: $id) { id status overrides spec } }', fc.record({ id: runId })],
  [
    'query($id: ID!) { sweep(id: $id) { id status } }',
    fc.record({
      id: fc.oneof(
        fc.constant(undefined).map(() => sweepIds[0] ?? 'sweep_20260101_000000'),
        nastyString,
      ),
    }),
  ],
  [
    'query($f: Int, $o: Int, $s: String, $t: String, $g: String, $st: RunStatus) { runs(first: $f, offset: $o, search: $s, tag: $t, graphName: $g, status: $st) { total items { id } } }',
    fc.record({
      f: maybe(anyInt),
      o: maybe(anyInt),
      s: maybe(nastyString),
      t: maybe(nastyString),
      g: maybe(nastyString),
      st: maybe(fc.oneof(fc.constantFrom('QUEUED', 'CANCELLED'), nastyString)),
    }),
  ],
  [
    'query($n: String!) { graph(name: $n) { name } }',
    fc.record({ n: fc.oneof(fc.constantFrom(...GRAPHS, '../graphs/x', 'constructor'), nastyString) }),
  ],
  [
    'query($n: String!, $s: String!) { dataset(name: $n) { name error split(name: $s) { name } } }',
    fc.record({
      n: fc.oneof(fc.constantFrom('arith', 'mcq', 'constructor', '__proto__', '..'), nastyString),
      s: fc.oneof(fc.constantFrom('test', 'dev', 'constructor', '__proto__', 'toString'), nastyString),
    }),
  ],
  [
    'mutation($id: ID!, $n: String, $no: String, $t: [String!]) { updateRun(id: $id, name: $n, note: $no, tags: $t) { id name } }',
    fc.record({ id: runId, n: maybe(nastyString), no: maybe(nastyString), t: maybe(fc.array(nastyString, { maxLength: 40 })) }),
  ],
  [
    'mutation($id: ID!, $s: String!, $c: JSON) { rescoreRun(id: $id, scorer: $s, config: $c) { __typename } }',
    fc.record({
      id: runId,
      s: fc.oneof(fc.constantFrom('exact', 'pattern', 'numeric', 'constructor'), nastyString),
      c: maybe(fc.oneof(fc.constantFrom({ pattern: '(a+)+$' }, { abs_tol: -1 }), nastyValue)),
    }),
  ],
  [
    'mutation($id: ID!, $e: [EpisodeStatus!]) { retryRun(id: $id, endings: $e) { runId } }',
    fc.record({ id: runId, e: maybe(fc.oneof(fc.constantFrom(['COMPLETED'], ['CRASHED', 'TIMEOUT']), nastyValue)) }),
  ],
  [
    'mutation($id: ID!, $s: Int, $w: Int) { auditRun(id: $id, sample: $s, workerCount: $w) { __typename } }',
    fc.record({ id: runId, s: maybe(anyInt), w: maybe(anyInt) }),
  ],
  ['mutation($id: ID!) { cancelRun(id: $id) { id status } }', fc.record({ id: runId })],
  [
    'mutation($id: ID!) { cancelSweep(id: $id) { id } }',
    fc.record({
      id: fc.oneof(
        fc.constant(undefined).map(() => sweepIds[0] ?? 'sweep_20260101_000000'),
        nastyString,
      ),
    }),
  ],
];

const CANCEL_RUN = 'mutation($id: ID!) { cancelRun(id: $id) { status } }';
const CANCEL_SWEEP = 'mutation($id: ID!) { cancelSweep(id: $id) { id } }';

/** Keeps the queue empty: whatever was accepted is cancelled at once (and must cancel cleanly). */
async function cancelAccepted(answer: GqlResult): Promise<void> {
  const data = answer.data as { startEval?: { runId: string }; retryRun?: { runId: string } } | null | undefined;
  // A retried run is queued again, like a new one.
  const started = data?.startEval ?? data?.retryRun;
  if (started) {
    runIds.push(started.runId);
    const c = await call(CANCEL_RUN, { id: started.runId });
    expect(c.errors).toBeUndefined();
  }
  const sweep = (answer.data as { startSweep?: { id: string } } | null | undefined)?.startSweep;
  if (sweep) {
    sweepIds.push(sweep.id);
    const c = await call(CANCEL_SWEEP, { id: sweep.id });
    expect(c.errors).toBeUndefined();
  }
}

describe('the GraphQL API under generated variables', () => {
  it('every operation answers data or coded errors, in bounded time', async () => {
    const op = fc.integer({ min: 0, max: operations.length - 1 }).chain((i) => operations[i]![1].map((vars) => [i, vars] as const));
    await fc.assert(
      fc.asyncProperty(op, async ([i, vars]) => {
        const r = await attemptAsync(async () => {
          const answer = await call(operations[i]![0], vars);
          await cancelAccepted(answer);
        }, CALL_LIMIT_MS);
        if (!r.ok) throw r.error;
      }),
      fuzzParamsAsync(140),
    );
  });

  it('raw request bodies (duplicate keys, BOMs, deep nesting, stray bytes) are answered with codes', async () => {
    const fragment = fc.oneof(
      fc.constantFrom(
        '{"query": "{ runs { total } }"}',
        `{"query": ${JSON.stringify(START_EVAL)}, "variables": {"input": {"graphName": "gridnav_random", "graphName": "nope", "episodeCount": 1}}}`,
        '{"query": "{ __typename }", "query": "{ runs { total } }"}',
        '{"query": "{ __typename }", "variables": {"__proto__": {"x": 1}}}',
        '{"query": "{ __typename }", "operationName": {"a": 1}}',
        '{"query": 1}',
        '{"query": "{ __typename }", "extensions": {"persistedQuery": {"version": 1, "sha256Hash": "x"}}}',
        '\uFEFF',
        '\u0000',
        '{',
        '}',
        '"',
        '[',
        'null',
        '1e400',
      ),
      nastyString,
      fc.integer({ min: 1, max: 50_000 }).map((d) => `{"query": "{ __typename }", "variables": {"x": ${'['.repeat(d)}${']'.repeat(d)}}}`),
      fc.integer({ min: 1, max: 20_000 }).map((d) => `{"query": ${JSON.stringify(`{ ${'runs { items { '.repeat(d)}`)}}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fragment, { minLength: 1, maxLength: 3 }), async (parts) => {
        const body = parts.join('');
        const r = await attemptAsync(async () => {
          const { status, json } = await post(body);
          checkAnswer(status, json, body.slice(0, 200));
        }, CALL_LIMIT_MS);
        if (!r.ok) throw r.error;
      }),
      fuzzParamsAsync(50),
    );
  });
});
