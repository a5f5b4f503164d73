import { describe, expect, it } from 'vitest';
import { parseCliArgs } from '../../src/cli/args.js';

const parse = (args: string[]) =>
  parseCliArgs(
    {
      args,
      strict: true,
      allowPositionals: true,
      options: {
        episodes: { type: 'string', short: 'n' },
        set: { type: 'string', multiple: true },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    },
    'usage: x',
  );

describe('parseCliArgs', () => {
  it('reads the flags', () => {
    expect(parse(['g', '--episodes', '3', '--json']).values).toEqual({ episodes: '3', json: true });
    expect(parse(['--episodes=-3']).values.episodes).toBe('-3');
  });

  it('takes a flag declared multiple as often as it is given, and a boolean given twice as given', () => {
    const r = parse(['--set', 'a.b=1', '--set=a.c=2', '--json', '--json']);
    expect(r.values).toEqual({ set: ['a.b=1', 'a.c=2'], json: true });
    expect(r).not.toHaveProperty('tokens');
  });

  it.each([
    [
      ['--episodes', '-3'],
      'BAD_USER_INPUT',
      /^--episodes needs a value, and "-3" after it starts with "-": write --episodes=-3 to pass it as the value; usage: x$/,
    ],
    [['--bogus'], 'BAD_USER_INPUT', /^unknown option --bogus; usage: x$/],
    [['-q'], 'BAD_USER_INPUT', /^unknown option -q; usage: x$/],
    [['--episodes'], 'BAD_USER_INPUT', /^--episodes needs a value; usage: x$/],
    [['--json=yes'], 'BAD_USER_INPUT', /^--json takes no value; usage: x$/],
    [['--help=1'], 'BAD_USER_INPUT', /^--help takes no value; usage: x$/],
    [['--episodes', '3', '--episodes', '4'], 'BAD_USER_INPUT', /^--episodes is given 2 times \("3", "4"\); it takes one value; usage: x$/],
    [['-n', '3', '--episodes=3', '-n3'], 'BAD_USER_INPUT', /^--episodes is given 3 times \("3", "3", "3"\); it takes one value; usage: x$/],
  ])('says plainly what is wrong with %j, then the usage', (args, code, message) => {
    let err: (Error & { code?: string }) | undefined;
    try {
      parse(args);
    } catch (e) {
      err = e as Error & { code?: string };
    }
    expect(err?.code).toBe(code);
    expect(err?.message).toMatch(message);
  });
});
