/**
 * A run's episode selection (dataset, split, the episode range) as its env's panel picks it:
 * the field values each episode is loaded with, and the check that the panel offers them all.
 * The eval process checks through its env host before the first episode; the server and
 * `evalctl run` check a built-in env's selection at submit through its module's panel
 * (scheduler/dataset-selection.ts), so a typo is refused before anything is queued.
 */
import { BadInputError } from '../errors.js';
import type { PanelSpec } from '../core/types.js';

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
  const fields = panel.fields;
  const episodeField = fields.find((f) => f.name === 'episode') ?? fields[fields.length - 1];
  const fromSpec: Record<string, string | undefined> = { dataset: spec.dataset, split: spec.split };
  const out: Array<[string, string | number]> = [];
  for (const f of fields) {
    if (f === episodeField) continue;
    const v = fromSpec[f.name] ?? f.default;
    if (v !== undefined) out.push([f.name, v]);
  }
  if (episodeField) out.push([episodeField.name, episodeIndex]);
  return out;
}

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
        throw new BadInputError(
          `episodes ${first}..${last} are not all offered by ${nodeset}${where ? ` (${where})` : ''}: it has ${field} ${options[0]}..${options[options.length - 1]}`,
        );
      }
      continue;
    }
    if (!offered(value)) throw new BadInputError(`${field} "${value}" is not offered by ${nodeset}; choices: ${options.join(', ')}`);
    await walk.choose(field, value);
  }
}
