/**
 * Trains the policy_mlp cart-pole policy with the cross-entropy method and writes
 * src/nodesets/policy_mlp/weights.json. Seeded and single-threaded: the same flags give the
 * same weights. Uses the env's own physics and the nodeset's own forward pass.
 *
 *   node --import tsx scripts/train-policy-mlp.ts [--seed 1] [--generations 60] [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createPrng } from '../src/core/prng.js';
import type { EpisodeAddress, SplitName } from '../src/nodesets/_lib/episode-address.js';
import { DATASETS, episodeInitialState } from '../src/nodesets/env_cartpole/datasets.js';
import { isFallen, MAX_STEPS, stepPhysics, type CartPoleAction } from '../src/nodesets/env_cartpole/physics.js';
import { argmax, forward, packWeights, parameterCount, unflatten, type MlpWeights } from '../src/nodesets/policy_mlp/mlp.js';

const LAYERS = [4, 16, 16, 2];
/** Brings x, x_dot, theta and theta_dot to roughly unit range. */
const INPUT_SCALE = [1 / 2.4, 1 / 2, 1 / 0.21, 1 / 2];
const POPULATION = 50;
const ELITES = 10;
const EPISODES_PER_CANDIDATE = 8;
const INITIAL_STD = 0.5;
/** Extra exploration noise added to the std, decaying each generation, so the search does not collapse early. */
const EXTRA_STD = 0.2;
const EXTRA_STD_DECAY = 0.9;
/** Stop early once the mean policy keeps the pole up on this many fresh training episodes in a row. */
const CHECK_EPISODES = 100;

const defaultOut = fileURLToPath(new URL('../src/nodesets/policy_mlp/weights.json', import.meta.url));

function rollout(weights: MlpWeights, address: EpisodeAddress): number {
  const net = packWeights(weights);
  let state = episodeInitialState(address);
  for (let t = 1; t <= MAX_STEPS; t++) {
    state = stepPhysics(state, argmax(forward(net, state)) as CartPoleAction);
    if (isFallen(state)) return t;
  }
  return MAX_STEPS;
}

function meanLength(weights: MlpWeights, addresses: EpisodeAddress[]): number {
  let sum = 0;
  for (const a of addresses) sum += rollout(weights, a);
  return sum / addresses.length;
}

function successRate(weights: MlpWeights, split: SplitName, count: number): number {
  let ok = 0;
  for (let index = 0; index < count; index++) if (rollout(weights, { dataset: 'classic', split, index }) >= MAX_STEPS) ok++;
  return ok / count;
}

/** Pretty JSON with each list of numbers on one line. */
function formatWeights(weights: MlpWeights): string {
  const text = JSON.stringify(weights, null, 2).replace(
    /\[\s+(-?\d[^\][{}"]*?)\s+\]/g,
    (_, inner: string) => `[${inner.split(/,\s+/).join(', ')}]`,
  );
  return `${text}\n`;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string', default: '1' },
      generations: { type: 'string', default: '60' },
      out: { type: 'string', default: defaultOut },
    },
  });
  const seed = Number(values.seed);
  const generations = Number(values.generations);
  if (!Number.isSafeInteger(seed)) throw new Error(`--seed must be an integer, got ${values.seed}`);
  if (!Number.isInteger(generations) || generations < 1)
    throw new Error(`--generations must be a positive integer, got ${values.generations}`);

  const prng = createPrng(seed, 0x74_7261_696e);
  const trainCount = DATASETS.classic!.splits.train;
  const n = parameterCount(LAYERS);
  let mean = new Float64Array(n);
  let std = new Float64Array(n).fill(INITIAL_STD);
  let extra = EXTRA_STD;
  let generation = 0;
  for (; generation < generations; generation++) {
    const episodes = Array.from({ length: EPISODES_PER_CANDIDATE }, () => ({
      dataset: 'classic',
      split: 'train' as const,
      index: prng.int(trainCount),
    }));
    const scored = Array.from({ length: POPULATION }, () => {
      const theta = new Float64Array(n);
      for (let i = 0; i < n; i++) theta[i] = mean[i]! + std[i]! * prng.normal();
      return { theta, fitness: meanLength(unflatten(LAYERS, INPUT_SCALE, theta), episodes) };
    });
    // Stable order on ties keeps the run reproducible.
    const elites = scored
      .map((s, i) => ({ ...s, i }))
      .sort((a, b) => b.fitness - a.fitness || a.i - b.i)
      .slice(0, ELITES);
    const nextMean = new Float64Array(n);
    const nextStd = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let m = 0;
      for (const e of elites) m += e.theta[i]!;
      m /= ELITES;
      let v = 0;
      for (const e of elites) v += (e.theta[i]! - m) ** 2;
      nextMean[i] = m;
      nextStd[i] = Math.sqrt(v / ELITES) + extra;
    }
    mean = nextMean;
    std = nextStd;
    extra *= EXTRA_STD_DECAY;
    const check = Array.from({ length: CHECK_EPISODES }, () => ({
      dataset: 'classic',
      split: 'train' as const,
      index: prng.int(trainCount),
    }));
    const checkMean = meanLength(unflatten(LAYERS, INPUT_SCALE, mean), check);
    process.stderr.write(
      `generation ${generation}: elite mean length ${(elites.reduce((s, e) => s + e.fitness, 0) / ELITES).toFixed(1)}, ` +
        `mean policy ${checkMean.toFixed(1)} on ${CHECK_EPISODES} train episodes\n`,
    );
    if (checkMean >= MAX_STEPS) {
      generation++;
      break;
    }
  }

  const weights = unflatten(LAYERS, INPUT_SCALE, mean);
  const successBySplit = {
    train: successRate(weights, 'train', 200),
    val: successRate(weights, 'val', DATASETS.classic!.splits.val),
    test: successRate(weights, 'test', DATASETS.classic!.splits.test),
  };
  weights.training = {
    method: 'cross-entropy method',
    script: 'scripts/train-policy-mlp.ts',
    seed,
    generations: generation,
    population: POPULATION,
    elites: ELITES,
    episodesPerCandidate: EPISODES_PER_CANDIDATE,
    successBySplit,
  };
  writeFileSync(values.out, formatWeights(weights));
  process.stderr.write(`success rate by split: ${JSON.stringify(successBySplit)}; wrote ${values.out}\n`);
}

main();
