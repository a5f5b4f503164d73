/** The stand-in OpenAI server as a process of its own (test/support/openai-stub-main.ts), for the llm benchmarks. */
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import { PACKAGE_ROOT } from '../src/paths.js';

/** Starts the stand-in, expecting `key`; resolves with its base URL (ending in /v1) once it listens. */
export async function startStubProcess(key: string, args: string[] = []): Promise<{ url: string; proc: ResultPromise }> {
  const proc = execa(
    process.execPath,
    ['--import', 'tsx', join(PACKAGE_ROOT, 'test', 'support', 'openai-stub-main.ts'), '--port', '0', ...args],
    {
      buffer: false,
      reject: false,
      stdin: 'ignore',
      env: { OPENAI_STUB_KEY: key },
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (line.startsWith('OPENAI_STUB_URL ')) resolve(line.slice('OPENAI_STUB_URL '.length).trim());
    });
    void proc.then(() => reject(new Error('the stand-in exited before it listened')));
  });
  return { url, proc };
}
