/** The stand-in server's answers depend on the request alone, never on how many requests came before. */
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIStub, type OpenAIStub } from './openai-stub.js';

let stub: OpenAIStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const tools = [{ type: 'function', function: { name: 'calculator', parameters: { type: 'object' } } }];

async function toolCallId(baseURL: string, question: string): Promise<string> {
  const res = await fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'stub', messages: [{ role: 'user', content: question }], tools }),
  });
  const body = (await res.json()) as { choices: Array<{ message: { tool_calls: Array<{ id: string }> } }> };
  return body.choices[0]!.message.tool_calls[0]!.id;
}

describe('the OpenAI stub', () => {
  it('gives a tool call the same id for the same request, whatever arrived before it', async () => {
    stub = await startOpenAIStub();
    const first = await toolCallId(stub.baseURL, 'What is 2 + 3?');
    await toolCallId(stub.baseURL, 'What is 4 + 5?');
    expect(await toolCallId(stub.baseURL, 'What is 2 + 3?')).toBe(first);
    expect(await toolCallId(stub.baseURL, 'What is 4 + 5?')).not.toBe(first);
    expect(first).toMatch(/^call_[0-9a-f]{16}$/);
  });
});
