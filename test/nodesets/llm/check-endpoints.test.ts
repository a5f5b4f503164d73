/** The llm nodeset's preflight against the stand-in endpoint: one models list per endpoint, the key as the host sends it, and a refusal named. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkEndpoints } from '../../../src/nodesets/llm/check-endpoints.js';
import { startOpenAIStub, type OpenAIStub } from '../../support/openai-stub.js';

const KEY = 'sk-preflight-3d9a61c0e7b2';
let stub: OpenAIStub;

beforeAll(async () => {
  stub = await startOpenAIStub({ expectedKey: KEY });
});
afterAll(() => stub.close());

const check = (env: NodeJS.ProcessEnv, ...ids: string[]) =>
  checkEndpoints(
    ids.map((id) => ({ id, function: 'chat', config: { base_url: stub.baseURL, model: 'stub' } })),
    { env, signal: new AbortController().signal },
  );

describe('checkEndpoints', () => {
  it('asks each endpoint once for its models list, with the key, and calls no model', async () => {
    stub.reset();
    await check({ OPENAI_API_KEY: KEY }, 'chat', 'judge');
    expect(stub.stats()).toMatchObject({ modelLists: 1, requests: 0, unauthorized: 0 });
  });

  it('a refused key fails naming the URL and the HTTP status, never the key', async () => {
    const err = await check({ OPENAI_API_KEY: 'sk-wrong-key-0000' }, 'chat').then(
      () => new Error('the check passed'),
      (e: unknown) => e as Error,
    );
    expect(err).toMatchObject({ code: 'PREFLIGHT_FAILED', url: stub.baseURL });
    expect(err.message).toBe(
      `HTTP 401 at ${stub.baseURL} (GET ${stub.baseURL}/models, node "chat"): {"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
    );
    expect(err.message).not.toContain('sk-wrong-key-0000');
  });

  it('an endpoint without a models list is asked for one token instead', async () => {
    stub.setOptions({ expectedKey: KEY, noModelList: true });
    stub.reset();
    try {
      await check({ OPENAI_API_KEY: KEY }, 'chat');
      expect(stub.stats()).toMatchObject({ modelLists: 0, completions: 1 });
    } finally {
      stub.setOptions({ expectedKey: KEY });
    }
  });
});
