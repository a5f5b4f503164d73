/**
 * Sandboxes' cost (`npm run bench -- sandbox`): an episode's sandbox made, one `true` run in it
 * and the sandbox destroyed, one after another (p50/p99 ms); then 32 sandboxed episodes at once,
 * each running a short bash script in its own sandbox and being destroyed (wall time, and whether
 * every one succeeded). Runs in this process against src/, as the sandbox host would.
 * Run alone: `node --import tsx bench/sandbox.ts`.
 */
import sandbox, { sandboxPool } from '../src/nodesets/sandbox/handlers.js';
import type { ToolMessage } from '../src/nodesets/tools/handlers.js';

const ROUNDS = 60;
const CONCURRENT = 32;

const q = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

async function episode(key: string, command: string): Promise<string> {
  const out = await sandbox.functions!.tools!({
    inputs: { tool_calls: [{ id: 'a', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }] },
    config: { environment: { files: { 'in.txt': 'x\n' } } },
    ctx: { episodeKey: key, nodeId: 'tools', step: 0, episodeIndex: 0, runSeed: 0, seed: 0 } as never,
  });
  sandbox.evict!(key);
  return (out.tool_results as ToolMessage[])[0]!.content;
}

export async function benchSandbox(): Promise<void> {
  await episode('bench:warm', 'true');
  const ms: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    await episode(`bench:${i}`, 'true');
    ms.push(performance.now() - t0);
  }
  console.log(`sandbox create + true + destroy, ${ROUNDS} in a row: p50 ${q(ms, 0.5).toFixed(1)} ms, p99 ${q(ms, 0.99).toFixed(1)} ms`);
  const t0 = performance.now();
  const results = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) => episode(`bench:c${i}`, 'for f in 1 2 3; do cat in.txt > out$f.txt; done; ls | wc -l')),
  );
  const ok = results.filter((r) => r.trim() === '4').length;
  console.log(`${CONCURRENT} sandboxed episodes at once: ${(performance.now() - t0).toFixed(0)} ms wall, ${ok}/${CONCURRENT} succeeded`);
  sandboxPool.closeSync();
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSandbox();
