/**
 * What a dataset episode was asked and answered: its input, the sample's target, the answer
 * and what the scorer took from it, then each score with its explanation, rescorings beside
 * the graph's own and labelled as such.
 */
import { fmtMetricValue } from '../lib/format.js';

/** One entry of `Episode.scores`, as the record and the rescorings keep it. */
export interface ScoreView {
  scorer: string;
  value: number;
  answer: string | null;
  extracted: string | null;
  target: string | number | string[] | null;
  explanation: string;
  rescored?: boolean;
}

const isScore = (v: unknown): v is ScoreView =>
  typeof v === 'object' && v !== null && typeof (v as ScoreView).scorer === 'string' && typeof (v as ScoreView).value === 'number';

export const scoresOf = (raw: readonly unknown[]): ScoreView[] => raw.filter(isScore);

const targetText = (t: ScoreView['target']): string =>
  t === null ? '–' : Array.isArray(t) ? t.map((x) => `“${x}”`).join(' or ') : String(t);

export function SampleView({ input, scores }: { input: string | null; scores: readonly ScoreView[] }) {
  // The answer and target are the ones the graph's own scorer saw; a rescoring scores the same answer.
  const first = scores[0];
  return (
    <section data-testid="sample-view">
      <h3>Sample</h3>
      <dl className="kv sample">
        <dt>input</dt>
        <dd data-testid="sample-input" className="sample-text">
          {input ?? '–'}
        </dd>
        {first && (
          <>
            <dt>target</dt>
            <dd data-testid="sample-target" className="sample-text">
              {targetText(first.target)}
            </dd>
            <dt>answer</dt>
            <dd data-testid="sample-answer" className="sample-text">
              {first.answer ?? <span className="muted">no answer</span>}
            </dd>
            <dt>extracted</dt>
            <dd data-testid="sample-extracted" className="sample-text">
              {first.extracted ?? <span className="muted">nothing found</span>}
            </dd>
          </>
        )}
      </dl>
      {scores.length > 0 ? (
        <table className="grid compact" data-testid="sample-scores">
          <thead>
            <tr>
              <th>scorer</th>
              <th className="num">score</th>
              <th>explanation</th>
            </tr>
          </thead>
          <tbody>
            {scores.map((s) => (
              <tr key={`${s.scorer}${s.rescored ? '/rescored' : ''}`} data-rescored={s.rescored ? 'true' : undefined}>
                <th>
                  {s.scorer}
                  {s.rescored && (
                    <>
                      {' '}
                      <span className="tag">rescored</span>
                    </>
                  )}
                </th>
                <td className="num">{fmtMetricValue(s.value)}</td>
                <td>{s.explanation}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">Not scored: the episode ended without an answer to score.</p>
      )}
    </section>
  );
}
