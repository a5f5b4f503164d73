/**
 * The last number in the answer (numbers.ts says which forms are read) against the target's
 * number, within a tolerance: correct when |answer − target| ≤ max(abs_tol, rel_tol × |target|).
 * A list target accepts any entry.
 */
import { BadInputError } from '../errors.js';
import { lastNumber } from './numbers.js';
import { targetList, type Scorer } from './scorer.js';

export const numericScorer: Scorer = {
  name: 'numeric',
  description:
    'The last number in the answer ("1,234", "-2.5", "1e3", "3/4", "$5", "50%" are read) equals the target within max(abs_tol, rel_tol × |target|).',
  config: {
    abs_tol: { type: 'number', default: 1e-6, description: 'Absolute tolerance' },
    rel_tol: { type: 'number', default: 0, description: 'Relative tolerance, a fraction of |target|' },
  },
  needsTarget: true,
  check(config) {
    for (const k of ['abs_tol', 'rel_tol']) {
      if ((config[k] as number) < 0) throw new BadInputError(`scorer "numeric": config "${k}" must be ≥ 0`);
    }
  },
  score({ answer, target }, config) {
    const absTol = config.abs_tol as number;
    const relTol = config.rel_tol as number;
    const got = lastNumber(answer);
    if (!got) return { value: 0, extracted: null, explanation: 'no number in the answer' };
    const wants = targetList(target).flatMap((t) => {
      const n = typeof target === 'number' ? target : lastNumber(t)?.value;
      return n === undefined ? [] : [n];
    });
    if (wants.length === 0) return { value: 0, extracted: String(got.value), explanation: 'the target holds no number' };
    const hit = wants.find((w) => Math.abs(got.value - w) <= Math.max(absTol, relTol * Math.abs(w)));
    return {
      value: hit === undefined ? 0 : 1,
      extracted: String(got.value),
      explanation:
        hit === undefined ? `${got.value} is not within tolerance of ${wants.join(' or ')}` : `${got.value} is within tolerance of ${hit}`,
    };
  },
};
