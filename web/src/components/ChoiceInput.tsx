/**
 * The dataset or split box of a run form: a text box with a `<datalist>` of what the env offers,
 * its default as the placeholder. It still takes any text (the server checks it at submit).
 */
import type { EpisodeChoicesView } from '../hooks/useEpisodeChoices.js';

/** The box's id (for a `<label htmlFor>`) on a page whose ids start with `prefix`. */
export const choiceInputId = (prefix: string, name: 'dataset' | 'split'): string => `${prefix}${name}`;

export function ChoiceInput({
  name,
  prefix = '',
  choices,
  value,
  disabled,
  onChange,
}: {
  name: 'dataset' | 'split';
  /** Starts the box's and its list's ids, so two forms on a page do not share them. */
  prefix?: string;
  choices: EpisodeChoicesView | null;
  value: string;
  disabled?: boolean;
  onChange(value: string): void;
}) {
  const field = choices?.[name];
  const id = choiceInputId(prefix, name);
  return (
    <>
      <input
        id={id}
        name={name}
        list={`${id}-choices`}
        placeholder={field?.value ?? undefined}
        value={value}
        disabled={disabled}
        onChange={(e) => onChange(e.target.value)}
      />
      <datalist id={`${id}-choices`}>
        {field?.options.map((o) => (
          <option key={o} value={o} />
        ))}
      </datalist>
    </>
  );
}
