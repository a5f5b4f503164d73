/** The (normalised) answer contains the (normalised) target; a list target accepts any entry. */
import { normalizeAnswer } from './normalize.js';
import { targetList, type Scorer } from './scorer.js';

export const includesScorer: Scorer = {
  name: 'includes',
  description: 'The normalised answer contains the normalised target as a substring; a list target accepts any entry.',
  config: {},
  needsTarget: true,
  score({ answer, target }) {
    const got = normalizeAnswer(answer);
    const hit = targetList(target).find((t) => {
      const want = normalizeAnswer(t);
      return want.length > 0 && got.includes(want);
    });
    return {
      value: hit === undefined ? 0 : 1,
      extracted: hit === undefined ? null : normalizeAnswer(hit),
      explanation: hit === undefined ? 'the answer contains no target' : `the answer contains target "${hit}"`,
    };
  },
};
