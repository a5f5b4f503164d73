/**
 * Token F1 as the SQuAD evaluation script computes it: bags of normalised tokens (squadTokens),
 * precision and recall of their overlap; the best over the targets. Two empty token lists
 * score 1, one empty list 0.
 */
import { squadTokens } from './normalize.js';
import { targetList, type Scorer } from './scorer.js';

export function tokenF1(prediction: readonly string[], truth: readonly string[]): number {
  if (prediction.length === 0 || truth.length === 0) return prediction.length === truth.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const t of truth) counts.set(t, (counts.get(t) ?? 0) + 1);
  let same = 0;
  for (const p of prediction) {
    const c = counts.get(p) ?? 0;
    if (c > 0) {
      same++;
      counts.set(p, c - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / prediction.length;
  const recall = same / truth.length;
  return (2 * precision * recall) / (precision + recall);
}

export const f1Scorer: Scorer = {
  name: 'f1',
  description: 'SQuAD token F1 (lower case, punctuation and articles removed) against the best-matching target.',
  config: {},
  needsTarget: true,
  score({ answer, target }) {
    const got = squadTokens(answer);
    let best = 0;
    let bestTarget: string | undefined;
    for (const t of targetList(target)) {
      const f = tokenF1(got, squadTokens(t));
      if (bestTarget === undefined || f > best) {
        best = f;
        bestTarget = t;
      }
    }
    return {
      value: best,
      extracted: got.join(' '),
      explanation: bestTarget === undefined ? 'no target' : `token F1 ${best.toFixed(3)} against "${bestTarget}"`,
    };
  },
};
