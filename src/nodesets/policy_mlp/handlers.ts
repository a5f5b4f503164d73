/**
 * policy_mlp: the cart-pole MLP policy, served batched. Like a model on an accelerator, each
 * handler call prepares its weights once (parse, check, pack) and then runs every row through
 * the same forward pass, one row at a time, so the preparation is amortised over the batch
 * while each row's bytes stay what they would be alone.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NodeCallArgs, NodeOutputs, NodesetModule } from '../../core/types.js';
import { numberConfig } from '../_lib/config.js';
import { sleep } from '../_lib/sleep.js';
import { argmax, checkWeights, forward, packWeights, type PackedMlp } from './mlp.js';

export const WEIGHTS_FILE = 'weights.json';

let weightsText: string | undefined;
let weightsSource = '';

function loadWeightsText(dir: string): void {
  weightsSource = join(dir, WEIGHTS_FILE);
  const text = readFileSync(weightsSource, 'utf8');
  checkWeights(JSON.parse(text), weightsSource);
  weightsText = text;
}

/** The per-call preparation: from the stored file text to the packed network. */
function prepare(): PackedMlp {
  if (weightsText === undefined) loadWeightsText(fileURLToPath(new URL('.', import.meta.url)));
  return packWeights(checkWeights(JSON.parse(weightsText!), weightsSource));
}

function actRow(net: PackedMlp, { inputs }: NodeCallArgs): NodeOutputs {
  const obs = inputs.observation;
  if (!Array.isArray(obs)) throw new Error(`policy_mlp act needs observation as an array of numbers, got ${JSON.stringify(obs)}`);
  const logits = forward(net, obs as number[]);
  return { action: argmax(logits), logits: Array.from(logits) };
}

async function actBatch(rows: NodeCallArgs[]): Promise<NodeOutputs[]> {
  if (rows.length === 0) return [];
  // One batch shares one config (the batcher keys queues by it).
  // The signal is read only when there is a wait to cut short: a host makes it on first read.
  const overhead = numberConfig(rows[0]!.config, 'call_overhead_ms', 0);
  if (overhead > 0) await sleep(overhead, rows[0]!.signal);
  const net = prepare();
  return rows.map((row) => actRow(net, row));
}

const policyMlp: NodesetModule = {
  functions: {
    act: async (args) => (await actBatch([args]))[0]!,
  },
  batched: { act: actBatch },
  init({ dir }): void {
    loadWeightsText(dir);
  },
};

export default policyMlp;
