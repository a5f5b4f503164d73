/** A `<datalist>` of what a picker field offers, for an `<input list={id}>` that still takes any text. */
import type { ChoiceField } from '../hooks/useEpisodeChoices.js';

export function ChoiceList({ id, field }: { id: string; field: ChoiceField | undefined }) {
  return (
    <datalist id={id} data-testid={id}>
      {field?.options.map((o) => (
        <option key={o} value={o} />
      ))}
    </datalist>
  );
}
