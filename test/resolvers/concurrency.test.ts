/** Run.concurrency and StartEvalInput.maxInFlight over a real server: what bounds a run is in its answer, a bad count is refused naming the field. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START_EVAL, startServer, codeOf, type TestServer } from '../app.helpers.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

const CONCURRENCY = `query($id: ID!) { run(id: $id) { concurrency { workers perWorker maxInFlight asked basis limits { name limit reason } } } }`;

describe('Run.concurrency', () => {
  it('says a replicated env holds a run asking for 8 in flight to one episode per worker', async () => {
    const started = await server.gql(START_EVAL, {
      input: { graphName: 'gridnav_planner', episodeCount: 4, workerCount: 2, maxInFlight: 8 },
    });
    expect(started.errors).toBeUndefined();
    const r = await server.gql(CONCURRENCY, { id: started.data!.startEval.runId });
    expect(r.errors).toBeUndefined();
    expect(r.data!.run.concurrency).toEqual({
      workers: 2,
      perWorker: 1,
      maxInFlight: 2,
      asked: 8,
      basis: 'asked by the run',
      limits: [{ name: 'env_gridnav', limit: 2, reason: expect.stringContaining('env_gridnav is replicated') }],
    });
  });

  it('refuses fewer in flight than workers with BAD_USER_INPUT naming maxInFlight', async () => {
    const r = await server.gql(START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 4, workerCount: 4, maxInFlight: 2 } });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors?.[0]?.message).toMatch(/maxInFlight.*at least workerCount \(4\)/);
  });
});
