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
});
