/**
 * Runs a few chat-completions calls through the `openai` client and the node's own fetch against
 * a loopback server in this thread before the host says it is ready. The first calls of a fresh
 * thread load and compile the client's request path (HTTP client, headers, response classes):
 * paid there by 64 workers at once, that put the first round of a run ~50 % behind the later
 * ones (docs/decisions.md has the measurement). Nothing here touches the run's endpoint, key,
 * cache or concurrency limit; a warm-up that fails or stalls is dropped, never the host. With a
 * proxy in the environment the calls would not take the node's own path (and might reach the
 * proxy), so there is none.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { httpFetch, PROXIED } from './http-fetch.js';

/** Calls made; enough for the lazily loaded parts and the interpreter's first tiers. */
const CALLS = 8;
/** The warm-up never holds a host back longer than this. */
const LIMIT_MS = 2000;

const ANSWER = JSON.stringify({
  id: 'warm-up',
  object: 'chat.completion',
  created: 0,
  model: 'warm-up',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

/** Resolves with the calls answered once they are done, failed or ran past LIMIT_MS; never rejects. */
export async function warmUpClient(): Promise<number> {
  if (PROXIED) return 0;
  let answered = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(ANSWER);
    });
  });
  const signal = AbortSignal.timeout(LIMIT_MS);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'warm-up', maxRetries: 0, fetch: httpFetch });
    for (let i = 0; i < CALLS && !signal.aborted; i++) {
      await client.chat.completions.create(
        { model: 'warm-up', messages: [{ role: 'user', content: 'warm-up' }], temperature: 0 },
        { signal },
      );
      answered++;
    }
  } catch {
    // A warm-up is an optimisation only.
  } finally {
    server.closeAllConnections();
    server.close();
  }
  return answered;
}
