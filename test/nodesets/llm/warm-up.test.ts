/** The llm host's warm-up: it reaches no endpoint of the user's and leaves nothing open. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import llm from '../../../src/nodesets/llm/handlers.js';
import { warmUpClient } from '../../../src/nodesets/llm/warm-up.js';
import { startOpenAIStub, type OpenAIStub } from '../../support/openai-stub.js';

let stub: OpenAIStub | undefined;

afterEach(async () => {
  vi.unstubAllEnvs();
  await stub?.close();
  stub = undefined;
});

const tcpHandles = (): number => process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP')).length;

describe('warmUpClient', () => {
  it('answers its calls and leaves no server or connection open', async () => {
    const before = tcpHandles();
    expect(await warmUpClient()).toBe(8);
    await vi.waitFor(() => expect(tcpHandles()).toBe(before), { timeout: 2000 });
  });

  it('as the host init, calls nothing at the configured endpoint', async () => {
    stub = await startOpenAIStub({});
    vi.stubEnv('OPENAI_BASE_URL', stub.baseURL);
    vi.stubEnv('OPENAI_API_KEY', 'sk-warm-up-test');
    await llm.init?.({ dir: '.', manifest: { name: 'llm', version: '1.0.0', functions: [] } as never });
    expect(stub.stats().requests).toBe(0);
  });
});
