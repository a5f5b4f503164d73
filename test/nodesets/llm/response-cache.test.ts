/** The response cache on disk: what it gives back, and what it treats as a miss. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CachedResponse, cacheKey, ResponseCache } from '../../../src/nodesets/llm/response-cache.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'llm-cache-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const response: CachedResponse = {
  message: { role: 'assistant', content: '42' },
  finish_reason: 'stop',
  usage: { prompt_tokens: 12, completion_tokens: 1 },
};

describe('ResponseCache', () => {
  it('gives back what was put', async () => {
    const cache = new ResponseCache(dir);
    const key = cacheKey('http://x/v1', { model: 'm', messages: [{ role: 'user', content: 'a' }] });
    await cache.put(key, response);
    expect(await cache.get(key)).toEqual(response);
  });

  it.each([
    ['torn JSON', '{"message": {"role": "assis'],
    ['an empty object', '{}'],
    ['a message without usage', JSON.stringify({ message: { role: 'assistant', content: '1' } })],
    ['usage that is not counts', JSON.stringify({ ...response, usage: { prompt_tokens: 'x', completion_tokens: 1 } })],
    ['tool_calls that are not an array', JSON.stringify({ ...response, message: { role: 'assistant', content: null, tool_calls: {} } })],
    ['null', 'null'],
  ])('reads a file holding %s as a miss, not as an answer', async (_what, text) => {
    const cache = new ResponseCache(dir);
    const key = cacheKey('http://x/v1', { model: 'm', messages: [{ role: 'user', content: text }] });
    await mkdir(join(dir, key.slice(0, 2)), { recursive: true });
    await writeFile(join(dir, key.slice(0, 2), `${key}.json`), text);
    expect(await cache.get(key)).toBeUndefined();
    // The next answer overwrites it.
    await cache.put(key, response);
    expect(await cache.get(key)).toEqual(response);
  });
});

describe('cacheKey', () => {
  const request = { model: 'm', messages: [{ role: 'user', content: 'a' }], temperature: 0.7 };

  it('tells apart the repeats of a play, every sampling parameter and the endpoint; repeat 0 keeps the key a run without repeats had', () => {
    const plain = cacheKey('http://x/v1', request);
    expect(cacheKey('http://x/v1', request, 0)).toBe(plain);
    const keys = [
      plain,
      cacheKey('http://x/v1', request, 1),
      cacheKey('http://x/v1', request, 2),
      cacheKey('http://x/v1', { ...request, top_p: 0.9 }),
      cacheKey('http://x/v1', { ...request, temperature: 0.8 }),
      cacheKey('http://x/v1', { ...request, seed: 1 }),
      cacheKey('http://x/v1', { ...request, max_tokens: 10 }),
      cacheKey('http://x/v1', { ...request, model: 'n' }),
      cacheKey('http://y/v1', request),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });
});
