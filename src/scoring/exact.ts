/** Exact match after normalisation (normalize.ts); a list target accepts any of its entries. */
import { normalizeAnswer } from './normalize.js';
import { targetList, type Scorer } from './scorer.js';

export const exactScorer: Scorer = {
  name: 'exact',
  description:
    'Exact match after normalisation (trim, case-fold, collapse whitespace, strip trailing punctuation); a list target accepts any entry.',
  config: {},
  needsTarget: true,
  score({ answer, target }) {
    const got = normalizeAnswer(answer);
    const hit = targetList(target).find((t) => normalizeAnswer(t) === got);
    return {
      value: hit === undefined ? 0 : 1,
      extracted: got,
      explanation: hit === undefined ? `"${got}" matches no target` : `"${got}" equals target "${hit}"`,
    };
  },
};
