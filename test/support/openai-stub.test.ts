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

describe('scripted agents', () => {
  it('answers a scripted task with its tool calls in the wire format, one per turn, then the final answer', async () => {
    stub = await startOpenAIStub();
    const bashTool = [{ type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: { command: {} } } } }];
    const ask = async (messages: unknown[]) => {
      const res = await fetch(`${stub!.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'stub', messages, tools: bashTool }),
      });
      return ((await res.json()) as { choices: Array<{ finish_reason: string; message: Record<string, unknown> }> }).choices[0]!;
    };
    const user = { role: 'user', content: 'Task rename-draft: Rename draft.txt to final.txt.' };
    const first = await ask([user]);
    expect(first.finish_reason).toBe('tool_calls');
    expect(first.message.tool_calls).toEqual([
      {
        id: expect.stringMatching(/^call_/),
        type: 'function',
        function: { name: 'bash', arguments: '{"command":"mv draft.txt final.txt"}' },
      },
    ]);
    const done = await ask([user, first.message, { role: 'tool', tool_call_id: 'x', content: '' }]);
    expect(done).toMatchObject({ finish_reason: 'stop', message: { content: 'renamed' } });
    // A task without a script: a bash tool gets the prompt as its command.
    const other = await ask([{ role: 'user', content: 'Task word-count: How many words?' }]);
    expect((other.message.tool_calls as Array<{ function: { arguments: string } }>)[0]!.function.arguments).toBe(
      '{"command":"Task word-count: How many words?"}',
    );
  });
});
