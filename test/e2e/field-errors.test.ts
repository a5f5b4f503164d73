/** A refused New run or Play: each message beside the field it is about, in a form's words. */
import { describe, expect, it } from 'vitest';
import { formMessage, splitErrors } from '../../web/src/lib/fieldErrors.js';

const refused = (message: string, extensions: Record<string, unknown> = {}) =>
  splitErrors([{ message, extensions: { code: 'BAD_USER_INPUT', ...extensions } }]);

describe('splitErrors', () => {
  it('a required field left blank goes beside that field, not the first field the echoed input names', () => {
    const r = refused(
      'Variable "$input" got invalid value { graphName: "gridnav_planner", workerCount: 1, seed: 0 }; Field "episodeCount" of required type "Int!" was not provided.',
    );
    expect(r).toEqual({ byField: { episodeCount: 'required' }, general: [] });
  });

  it("GraphQL's coercion errors are said in a form's words", () => {
    expect(
      refused('Variable "$input" got invalid value "abc" at "input.episodeCount"; Int cannot represent non-integer value: "abc"'),
    ).toEqual({
      byField: { episodeCount: 'must be a whole number, got "abc"' },
      general: [],
    });
    expect(
      refused(
        'Variable "$input" got invalid value 99999999999 at "input.priority"; Int cannot represent non 32-bit signed integer value: 99999999999',
      ).byField.priority,
    ).toBe('must be a whole number from −2147483648 to 2147483647, got 99999999999');
  });

  it('extensions.field places a message whatever its words', () => {
    const r = refused('episodes 100000..100009 are not all offered by env_gridnav (standard/val): it has episode 0..199', {
      field: 'episodeOffset',
    });
    expect(r.byField).toEqual({
      episodeOffset: 'episodes 100000..100009 are not all offered by env_gridnav (standard/val): it has episode 0..199',
    });
  });

  it('a message about no form field stays general, naming the variable', () => {
    expect(refused('Variable "$index" got invalid value "abc"; Int cannot represent non-integer value: "abc"')).toEqual({
      byField: {},
      general: ['index: must be a whole number, got "abc"'],
    });
  });
});

describe('formMessage', () => {
  it('leaves the server’s own messages as they are', () => {
    expect(formMessage('graphName: graph "nope" not found')).toBe('graphName: graph "nope" not found');
  });
});
