/**
 * The stand-in OpenAI server as a process, for benches and manual runs:
 * `node --import tsx test/support/openai-stub-main.ts --port 0 [--latency-ms 200] [--fault-rate 0.3]
 * [--fault-kind 429|500|503|reset] [--fault-every k] [--fault-seed n] [--max-concurrent n] [--retry-after-sec s] [--key K]
 * [--answer-bytes n] [--model NAME]`.
 * Prints `OPENAI_STUB_URL http://127.0.0.1:<port>/v1` once it listens; stops on SIGTERM/SIGINT.
 * The key may also come from the environment variable OPENAI_STUB_KEY (so it stays off argv).
 */
import { parseArgs } from 'node:util';
import { startOpenAIStub, type StubFaultKind } from './openai-stub.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'latency-ms': { type: 'string' },
    'fault-rate': { type: 'string' },
    'fault-every': { type: 'string' },
    'fault-seed': { type: 'string' },
    'fault-kind': { type: 'string' },
    key: { type: 'string' },
    'answer-bytes': { type: 'string' },
    model: { type: 'string' },
    'max-concurrent': { type: 'string' },
    'retry-after-sec': { type: 'string' },
  },
});
const num = (v: string | undefined): number | undefined => (v === undefined ? undefined : Number(v));
const kind = values['fault-kind'];
const key = values.key ?? process.env.OPENAI_STUB_KEY;
const stub = await startOpenAIStub(
  {
    ...(values['latency-ms'] ? { latencyMs: num(values['latency-ms'])! } : {}),
    ...(values['fault-rate'] ? { faultRate: num(values['fault-rate'])! } : {}),
    ...(values['fault-every'] ? { faultEvery: num(values['fault-every'])! } : {}),
    ...(values['fault-seed'] ? { faultSeed: num(values['fault-seed'])! } : {}),
    ...(kind ? { faultKind: (kind === 'reset' ? 'reset' : Number(kind)) as StubFaultKind } : {}),
    ...(key ? { expectedKey: key } : {}),
    ...(values['answer-bytes'] ? { answerBytes: num(values['answer-bytes'])! } : {}),
    ...(values.model ? { model: values.model } : {}),
    ...(values['max-concurrent'] ? { maxConcurrent: num(values['max-concurrent'])! } : {}),
    ...(values['retry-after-sec'] ? { retryAfterSec: num(values['retry-after-sec'])! } : {}),
  },
  Number(values.port),
);
process.stdout.write(`OPENAI_STUB_URL ${stub.baseURL}\n`);
const stop = (): void => {
  void stub.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
