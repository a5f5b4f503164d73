import { describe, expect, it } from 'vitest';
import type { PanelSpec, PanelValues } from '../../src/core/types.js';
import { checkPanelSelection, panelChoices, panelValues } from '../../src/nodeset-registry/panel-selection.js';

const panel: PanelSpec = {
  fields: [
    { name: 'dataset', label: 'Dataset', default: 'standard' },
    { name: 'split', label: 'Split', dependsOn: ['dataset'], default: 'val' },
    { name: 'episode', label: 'Episode', dependsOn: ['dataset', 'split'], default: 0 },
  ],
  actions: ['play'],
};

/** A panel over a fixed catalog: dataset → split → episode count; `open` fields offer no options (any value). */
function walkOver(catalog: Record<string, Record<string, number>>, open: string[] = []) {
  const chosen: PanelValues = {};
  const asked: string[] = [];
  return {
    asked,
    walk: {
      async options(field: string) {
        asked.push(field);
        if (open.includes(field)) return [];
        if (field === 'dataset') return Object.keys(catalog);
        const splits = catalog[String(chosen.dataset)] ?? {};
        if (field === 'split') return Object.keys(splits);
        return Array.from({ length: splits[String(chosen.split)] ?? 0 }, (_, i) => i);
      },
      async choose(field: string, value: string | number) {
        chosen[field] = value;
      },
    },
  };
}

const catalog = { standard: { val: 10, test: 5 }, mini: { val: 3 } };

describe('panel selection', () => {
  it('picks each episode with the spec’s dataset and split, else the defaults, the index last', () => {
    expect(panelValues(panel, {}, 7)).toEqual([
      ['dataset', 'standard'],
      ['split', 'val'],
      ['episode', 7],
    ]);
    expect(panelValues(panel, { dataset: 'mini' }, 2)).toEqual([
      ['dataset', 'mini'],
      ['split', 'val'],
      ['episode', 2],
    ]);
  });

  it('accepts a selection the panel offers, asking field by field', async () => {
    const { walk, asked } = walkOver(catalog);
    await checkPanelSelection('env', panel, { dataset: 'standard', split: 'test', episodeOffset: 1, episodeCount: 4 }, walk);
    expect(asked).toEqual(['dataset', 'split', 'episode']);
  });

  it.each([
    [{ dataset: 'nope' }, 'dataset "nope" is not offered by env; choices: standard, mini'],
    [{ split: 'train' }, 'split "train" is not offered by env; choices: val, test'],
    [{ dataset: 'mini', episodeCount: 4 }, 'episodes 0..3 are not all offered by env (mini/val): it has episode 0..2'],
    [{ episodeOffset: 9, episodeCount: 2 }, 'episodes 9..10 are not all offered by env (standard/val): it has episode 0..9'],
    [{ episodeOffset: 12, episodeCount: 1 }, 'episode 12 is not offered by env (standard/val): it has episode 0..9'],
  ])('refuses %j naming the field and what there is', async (patch, message) => {
    const { walk } = walkOver(catalog);
    await expect(checkPanelSelection('env', panel, { episodeOffset: 0, episodeCount: 1, ...patch }, walk)).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      message,
    });
  });

  it('takes any value for a field the panel gives no options for', async () => {
    const { walk } = walkOver(catalog, ['dataset', 'split', 'episode']);
    await checkPanelSelection('env', panel, { dataset: 'anything', episodeOffset: 100, episodeCount: 5 }, walk);
  });
  it('choices: every field with what it offers and the value that applies, and the episode count', async () => {
    const { walk } = walkOver(catalog);
    expect(await panelChoices('env', panel, { split: 'test' }, walk)).toEqual({
      fields: [
        { name: 'dataset', label: 'Dataset', options: ['standard', 'mini'], value: 'standard' },
        { name: 'split', label: 'Split', options: ['val', 'test'], value: 'test' },
      ],
      episodes: 5,
      problem: null,
    });
  });

  it('choices: a field without a default takes the walk’s fallback, and one without either stops the walk', async () => {
    const noDefault: PanelSpec = { ...panel, fields: panel.fields.map((f) => (f.name === 'split' ? { name: 'split' } : f)) };
    const withFallback = walkOver(catalog);
    const r = await panelChoices('env', noDefault, { dataset: 'mini' }, { ...withFallback.walk, fallback: () => 'val' });
    expect([r.fields[1]?.value, r.episodes, r.problem]).toEqual(['val', 3, null]);
    const without = await panelChoices('env', noDefault, {}, walkOver(catalog).walk);
    expect([without.fields[1]?.value, without.episodes, without.problem]).toEqual([null, null, 'split: pick one of val, test']);
  });

  it('choices: a walk that throws stops there, with the reason', async () => {
    const { walk } = walkOver(catalog);
    const failing = { ...walk, choose: async () => Promise.reject(new Error('dataset file is broken')) };
    const r = await panelChoices('env', panel, {}, failing);
    expect(r.fields.map((f) => f.options.length)).toEqual([2, 0]);
    expect([r.episodes, r.problem]).toEqual([null, 'dataset: dataset file is broken']);
  });
});
