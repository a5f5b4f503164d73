/**
 * Live Play over graphql-ws: every step streamed with its picture, the interactive lock held
 * while it plays and released when it ends or the client goes away.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { codeOf, startServer, waitFor, wsCollect, type TestServer } from './app.helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const PLAY = `subscription Play($graph: String!, $index: Int!, $overrides: JSON) {
  playEpisode(graphName: $graph, index: $index, overrides: $overrides) {
    kind step done image observation action metrics status record holder
  }
}`;

interface PlayEvent {
  kind: 'STARTED' | 'STEP' | 'FINISHED';
  step: number | null;
  done: boolean;
  image: string | null;
  observation: Record<string, unknown> | null;
  action: unknown;
  metrics: Record<string, unknown> | null;
  status: string | null;
  record: Record<string, unknown> | null;
  holder: string | null;
}

const lockHolder = async (s: TestServer) =>
  (await s.gql(`{ resources { interactiveLockHolder } }`)).data!.resources.interactiveLockHolder as string | null;

describe('playEpisode', () => {
  it('streams every step with its picture and ends with the record, holding the lock meanwhile', async () => {
    server = await startServer();
    const s = server;
    const holders: Array<string | null> = [];
    let checking: Promise<unknown> = Promise.resolve();
    const events = await wsCollect<{ playEpisode: PlayEvent }>(s.ws(), PLAY, { graph: 'gridnav_planner', index: 3 }, (p) => {
      if (p.data?.playEpisode.kind === 'STEP' && p.data.playEpisode.step === 0) checking = lockHolder(s).then((h) => holders.push(h));
    });
    await checking;
    expect(
      events.every((e) => !e.errors),
      JSON.stringify(events.find((e) => e.errors)),
    ).toBe(true);
    const kinds = events.map((e) => e.data!.playEpisode.kind);
    expect(kinds[0]).toBe('STARTED');
    expect(kinds.at(-1)).toBe('FINISHED');
    const steps = events.map((e) => e.data!.playEpisode).filter((e) => e.kind === 'STEP');
    expect(steps.length).toBeGreaterThan(3);
    expect(steps.map((e) => e.step)).toEqual(steps.map((_, i) => i));
    for (const st of steps) {
      expect(st.image).toMatch(/^data:image\/png;base64,iVBOR/);
      expect(st.observation).toHaveProperty('position');
      expect(st.metrics).toHaveProperty('distance_to_goal');
    }
    expect(steps.at(-1)!.done).toBe(true);
    expect(steps.some((e) => typeof e.action === 'string')).toBe(true);
    const finished = events.at(-1)!.data!.playEpisode;
    expect(finished.status).toBe('COMPLETED');
    expect(finished.record).toMatchObject({ index: 0, steps: steps.length, status: 'COMPLETED' });
    expect(finished.metrics).toHaveProperty('success');
    expect(finished.image).toMatch(/^data:image\/png;base64,/);

    expect(holders[0]).toMatch(/^play gridnav_planner #3/);
    expect(events[0]!.data!.playEpisode.holder).toBe(holders[0]);
    expect(await lockHolder(s)).toBeNull();
  });

  it('releases the lock when the client goes away mid-episode', async () => {
    server = await startServer();
    const s = server;
    const client = s.ws();
    let steps = 0;
    client.subscribe(
      { query: PLAY, variables: { graph: 'gridnav_planner', index: 1, overrides: { env: { step_latency_ms: 150 } } } },
      {
        next: (p) => void ((p.data as { playEpisode: PlayEvent } | undefined)?.playEpisode.kind === 'STEP' && steps++),
        error: () => {},
        complete: () => {},
      },
    );
    await waitFor('two steps', () => steps >= 2);
    expect(await lockHolder(s)).not.toBeNull();
    await client.dispose();
    await waitFor('the lock to be released', async () => (await lockHolder(s)) === null, 10_000);
  });

  it('refuses an unknown graph or node with BAD_USER_INPUT before anything starts', async () => {
    server = await startServer();
    const s = server;
    const unknown = await wsCollect(s.ws(), PLAY, { graph: 'no_such_graph', index: 0 });
    expect(codeOf(unknown[0]!)).toBe('BAD_USER_INPUT');
    const badNode = await wsCollect(s.ws(), PLAY, { graph: 'gridnav_planner', index: 0, overrides: { ghost: { a: 1 } } });
    expect(codeOf(badNode[0]!)).toBe('BAD_USER_INPUT');
    expect(badNode[0]!.errors![0]!.message).toContain('ghost');
    // A config value of the wrong type: refused before STARTED (nothing else is sent), with every problem, as startEval does.
    const badValue = await wsCollect(s.ws(), PLAY, { graph: 'gridnav_planner', index: 0, overrides: { agent: { epsilon: 'lots' } } });
    expect(badValue).toHaveLength(1);
    expect(codeOf(badValue[0]!)).toBe('BAD_USER_INPUT');
    expect(badValue[0]!.errors![0]!.extensions).toMatchObject({ reason: 'GRAPH_INVALID', problems: [expect.stringContaining('epsilon')] });
    expect(await lockHolder(s)).toBeNull();
  });

  it('refuses a dataset or an episode the built-in env lacks, naming the choices, before the episode starts', async () => {
    server = await startServer();
    const s = server;
    const select = `subscription Play($index: Int!, $dataset: String) {
      playEpisode(graphName: "gridnav_planner", index: $index, dataset: $dataset) { kind }
    }`;
    const dataset = await wsCollect(s.ws(), select, { index: 0, dataset: 'nope' });
    expect(dataset).toHaveLength(1);
    expect(codeOf(dataset[0]!)).toBe('BAD_USER_INPUT');
    expect(dataset[0]!.errors![0]!.message).toBe('dataset "nope" is not offered by env_gridnav; choices: mini, standard, large');
    const episode = await wsCollect(s.ws(), select, { index: 200, dataset: 'mini' });
    expect(episode).toHaveLength(1);
    expect(episode[0]!.errors![0]!.message).toBe('episode 200 is not offered by env_gridnav (mini/val): it has episode 0..199');
    expect(await lockHolder(s)).toBeNull();
  });
});
