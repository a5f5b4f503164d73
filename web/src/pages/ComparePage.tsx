/** Runs side by side: the paired comparison of candidates against a baseline. */
import { Empty } from '../components/States.js';

export function ComparePage({ baseline, candidates }: { baseline: string | null; candidates: string[] }) {
  return (
    <Empty>
      Comparing {baseline ?? '–'} with {candidates.join(', ') || '–'}.
    </Empty>
  );
}
