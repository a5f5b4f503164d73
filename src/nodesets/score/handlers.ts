/**
 * score: one function per scorer (src/scoring). Each scores the `answer` against the `target`
 * once the answer arrives, outputs the score, its metrics and `done`; before that (an agent
 * still working) it outputs nothing.
 */
import type { NodeCallArgs, NodeFunction, NodeOutputs, NodesetModule } from '../../core/types.js';
import { answerText, asTarget, prepareScorer, scoreAnswer, scorerNames } from '../../scoring/registry.js';

function choicesOf(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.map((c) => (typeof c === 'string' ? c : JSON.stringify(c)));
}

const scoreWith =
  (name: string): NodeFunction =>
  ({ inputs, config }: NodeCallArgs): NodeOutputs => {
    if (inputs.answer === undefined) return {};
    const prepared = prepareScorer(name, config);
    const choices = choicesOf(inputs.choices);
    const score = scoreAnswer(prepared, {
      answer: answerText(inputs.answer),
      target: asTarget(inputs.target),
      ...(choices ? { choices } : {}),
    });
    return { score, metrics: { score: score.value, correct: score.value === 1 }, done: true };
  };

const score: NodesetModule = {
  functions: Object.fromEntries(scorerNames().map((n) => [n, scoreWith(n)])),
};

export default score;
