/** `evalctl serve`'s flags: a flag that takes one value is refused when given twice, as every other command's. */
import { describe, expect, it } from 'vitest';
import { parseServeArgs } from '../../src/cli/serve.js';

describe('parseServeArgs', () => {
  it('refuses a single-valued flag given twice, naming it and its values', () => {
    expect(() => parseServeArgs(['--port', '4000', '-p', '4001'])).toThrow(
      /^--port is given 2 times \("4000", "4001"\); it takes one value; usage: evalctl serve/,
    );
    expect(() => parseServeArgs(['--outputs', 'a', '--outputs=b'])).toThrow('--outputs is given 2 times');
  });

  it('keeps the flags meant to repeat, and says an unknown one in a line', () => {
    const args = parseServeArgs(['--allow-origin', 'http://a.test', '--allow-origin', 'http://b.test', '--port', '0']);
    expect(args.allowedOrigins).toEqual(['http://a.test', 'http://b.test']);
    expect(args.port).toBe(0);
    expect(() => parseServeArgs(['--prot', '4000'])).toThrow(/^unknown option --prot; usage: evalctl serve/);
  });

  it('takes the hung limit in milliseconds, 0 turning the check off, and names a bad value', () => {
    expect(parseServeArgs(['--eval-hung-ms', '30000']).evalHungMs).toBe(30_000);
    expect(parseServeArgs(['--eval-hung-ms', '0']).evalHungMs).toBe(0);
    expect(parseServeArgs([]).evalHungMs).toBeUndefined();
    expect(() => parseServeArgs(['--eval-hung-ms', '1.5s'])).toThrow(
      '--eval-hung-ms must be a whole number of milliseconds (0 turns the check off), got "1.5s"',
    );
  });
});
