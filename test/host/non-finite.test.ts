import { describe, expect, it } from 'vitest';
import { parseWithNonFinite } from '../../src/host/non-finite.js';

describe('parseWithNonFinite', () => {
  it('leaves the tokens inside strings, escaped quotes included, as they are', () => {
    expect(parseWithNonFinite('{"outputs": {"a": "say \\"NaN\\" -Infinity", "b": NaN}}')).toEqual({
      outputs: { a: 'say "NaN" -Infinity', b: null, $nonFinite: [{ port: 'b', value: 'NaN' }] },
    });
  });

  it('keeps a $nonFinite the host sent itself, and reads negative numbers as numbers', () => {
    expect(parseWithNonFinite('{"outputs": {"m": {"d": -Infinity, "e": -2}, "$nonFinite": []}}')).toEqual({
      outputs: { m: { d: null, e: -2 }, $nonFinite: [] },
    });
  });

  it('is undefined for text without such a token, or not JSON with them read', () => {
    expect(parseWithNonFinite('{"outputs": oops}')).toBeUndefined();
    expect(parseWithNonFinite('{"outputs": Nan}')).toBeUndefined();
    expect(parseWithNonFinite('NaN')).toBeNull();
  });
});
