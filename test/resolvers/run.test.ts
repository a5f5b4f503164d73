/** The `Run` type's aggregates over a real server, on run directories written by hand. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../app.helpers.js';
import { scoredRecord, writeScoredRun } from '../support/scored-run.js';

let dir: string;
let server: TestServer;
let huge: string;
let nullMean: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'resolvers-run-'));
  const outputs = join(dir, 'outputs');
  const episodes = [0, 1, 2, 3].map((i) => scoredRecord(i, { big: 1e308 }));
  huge = (await writeScoredRun(outputs, new Date(2026, 0, 1, 0, 0, 0), episodes)).runId;
  // A summary written before means of huge values were rescued: its mean is null (JSON of Infinity).
  nullMean = (
    await writeScoredRun(outputs, new Date(2026, 0, 1, 0, 0, 1), episodes, (s) => {
      s.aggregateMetrics[0]!.mean = Number.POSITIVE_INFINITY;
    })
  ).runId;
  server = await startServer({ outputsDir: outputs });
});
afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

const AGGREGATES = `query($id: ID!) { run(id: $id) { aggregateMetrics { name mean stderr min max ci95Low ci95High } } }`;

describe('Run.aggregateMetrics', () => {
  it('gives the true mean of a metric of 1e308 in every episode', async () => {
    const r = await server.gql(AGGREGATES, { id: huge });
    expect(r.errors).toBeUndefined();
    expect(r.data!.run.aggregateMetrics).toEqual([
      { name: 'big', mean: 1e308, stderr: 0, min: 1e308, max: 1e308, ci95Low: 1e308, ci95High: 1e308 },
    ]);
  });

  it('answers null, never 0, for a mean the summary does not hold', async () => {
    const r = await server.gql(AGGREGATES, { id: nullMean });
    expect(r.errors).toBeUndefined();
    expect(r.data!.run.aggregateMetrics[0]).toMatchObject({ name: 'big', mean: null, min: 1e308 });
  });
});
