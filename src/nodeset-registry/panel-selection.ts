/**
 * A run's episode selection (dataset, split, the episode range) as its env's panel picks it:
 * the field values each episode is loaded with, and the check that the panel offers them all.
 * The eval process checks through its env host before the first episode; the server and
 * `evalctl run` check a built-in env's selection at submit through its module's panel
 * (scheduler/dataset-selection.ts), so a typo is refused before anything is queued.
 */
import { RunInputError, errorMessage } from '../errors.js';
import type { PanelFieldSpec, PanelSpec } from '../core/types.js';

/** The fields of a run spec that select its episodes. */
export interface EpisodeSelection {
  dataset?: string | undefined;
  split?: string | undefined;
  episodeOffset: number;
  episodeCount: number;
}

/**
 * The panel values that pick episode `episodeIndex`: the spec's dataset and split (else each
 * field's default), in the panel's field order, and the index in its episode field (the one
 * named `episode`, else the last).
 */
export function panelValues(
  panel: PanelSpec,
  spec: Pick<EpisodeSelection, 'dataset' | 'split'>,
  episodeIndex: number,
): Array<[string, string | number]> {
  const episodeField = episodeFieldOf(panel);
  const out: Array<[string, string | number]> = [];
  for (const f of panel.fields) {
    if (f === episodeField) continue;
    const v = specValue(spec, f.name) ?? f.default;
    if (v !== undefined) out.push([f.name, v]);
  }
  if (episodeField) out.push([episodeField.name, episodeIndex]);
  return out;
}

/** The field that takes the episode index: the one named `episode`, else the last. */
const episodeFieldOf = (panel: PanelSpec): PanelFieldSpec | undefined =>
  panel.fields.find((f) => f.name === 'episode') ?? panel.fields[panel.fields.length - 1];

/** What a run spec sets for a panel field: its dataset and split, by those names. */
const specValue = (spec: Pick<EpisodeSelection, 'dataset' | 'split'>, field: string): string | undefined =>
  field === 'dataset' ? spec.dataset : field === 'split' ? spec.split : undefined;

/** A panel walked field by field: the options of the next field, given the values chosen so far. */
export interface PanelWalk {
  options(field: string): Promise<ReadonlyArray<string | number>>;
  choose(field: string, value: string | number): Promise<void>;
}

/**
 * Throws BAD_USER_INPUT naming the field when `nodeset`'s panel does not offer the selection:
 * a dataset or split it lacks (with its choices), or an episode range past what it has. A field
 * the panel gives no options for takes any value.
 */
export async function checkPanelSelection(nodeset: string, panel: PanelSpec, spec: EpisodeSelection, walk: PanelWalk): Promise<void> {
  const values = panelValues(panel, spec, spec.episodeOffset);
  const episodeField = values[values.length - 1]?.[0];
  for (const [field, value] of values) {
    const options = await walk.options(field);
    const offered = (v: string | number) => options.length === 0 || options.some((o) => String(o) === String(v));
    if (field === episodeField) {
      const first = spec.episodeOffset;
      const last = spec.episodeOffset + spec.episodeCount - 1;
      if (!offered(first) || !offered(last)) {
        const where = values
          .filter(([f]) => f !== field)
          .map(([, v]) => v)
          .join('/');
        const asked = first === last ? `${field} ${first} is not offered` : `episodes ${first}..${last} are not all offered`;
        throw new RunInputError(
          `${asked} by ${nodeset}${where ? ` (${where})` : ''}: it has ${field} ${options[0]}..${options[options.length - 1]}`,
          offered(first) ? 'episodeCount' : 'episodeOffset',
        );
      }
      continue;
    }
    if (!offered(value)) throw new RunInputError(`${field} "${value}" is not offered by ${nodeset}; choices: ${options.join(', ')}`, field);
    await walk.choose(field, value);
  }
}

/** One field of an env's picker as a form shows it: what it offers and the value that applies. */
export interface PanelFieldChoices {
  name: string;
  label: string | null;
  /** What the field offers given the fields before it; empty when it takes any value or the walk stopped before it. */
  options: string[];
  /** The value asked for when offered, else the field's default (or the walk's); null when neither applies. */
  value: string | null;
}

/** What an env's picker offers for a dataset and split, for a form to list before anything is submitted. */
export interface PanelChoices {
  fields: PanelFieldChoices[];
  /** How many episodes the chosen fields offer; null when the walk stopped before the episode field. */
  episodes: number | null;
  /** Why the walk stopped early (a value not offered, a dataset that does not load); null when it did not. */
  problem: string | null;
}

/** A walk that can also say the value a field takes when neither the request nor the manifest gives one (a dataset's default split). */
export interface ChoicesWalk extends PanelWalk {
  fallback?(field: string): string | undefined;
}

/**
 * Walks `panel` field by field with the spec's dataset and split (else each field's default) and
 * returns every field's options, stopping at the first value the panel does not offer. Errors
 * from the walk (a dataset file that does not parse) stop it too and become `problem`.
 */
export async function panelChoices(
  nodeset: string,
  panel: PanelSpec,
  spec: Pick<EpisodeSelection, 'dataset' | 'split'>,
  walk: ChoicesWalk,
): Promise<PanelChoices> {
  const episodeField = episodeFieldOf(panel);
  const out: PanelFieldChoices[] = [];
  let problem: string | null = null;
  for (const f of panel.fields) {
    if (f === episodeField) continue;
    const field: PanelFieldChoices = { name: f.name, label: f.label ?? null, options: [], value: null };
    out.push(field);
    if (problem !== null) continue;
    try {
      const options = await walk.options(f.name);
      field.options = options.map(String);
      const wanted = specValue(spec, f.name) ?? (f.default === undefined ? walk.fallback?.(f.name) : String(f.default));
      if (wanted === undefined) {
        if (options.length > 0) problem = `${f.name}: pick one of ${field.options.join(', ')}`;
        continue;
      }
      const chosen = options.length === 0 ? wanted : options.find((o) => String(o) === wanted);
      if (chosen === undefined) {
        problem = `${f.name} "${wanted}" is not offered by ${nodeset}; choices: ${field.options.join(', ')}`;
        continue;
      }
      field.value = String(chosen);
      await walk.choose(f.name, chosen);
    } catch (err) {
      problem = `${f.name}: ${errorMessage(err)}`;
    }
  }
  let episodes: number | null = null;
  if (problem === null && episodeField) {
    try {
      const offered = (await walk.options(episodeField.name)).length;
      // No options: the field takes any index, so the count is unknown.
      episodes = offered > 0 ? offered : null;
    } catch (err) {
      problem = `${episodeField.name}: ${errorMessage(err)}`;
    }
  }
  return { fields: out, episodes, problem };
}
