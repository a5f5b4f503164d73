import { describe, expect, it } from 'vitest';
import { showValue } from '../../src/core/show-value.js';

describe('showValue', () => {
  it('quotes a value as JSON, cut to 60 characters', () => {
    expect(showValue('abc')).toBe('"abc"');
    expect(showValue(undefined)).toBe('nothing');
    expect(showValue('x'.repeat(100))).toBe(`"${'x'.repeat(56)}…`);
  });

  it('says Infinity and NaN as they are, not as JSON null', () => {
    expect([showValue(Number.POSITIVE_INFINITY), showValue(Number.NaN)]).toEqual(['Infinity', 'NaN']);
  });

  it('escapes direction overrides and C1 controls, so a quoted value cannot turn the message around', () => {
    expect(showValue('safe\u202egnp.exe')).toBe('"safe\\u202egnp.exe"');
    expect(showValue('a\u0085b é')).toBe('"a\\u0085b é"');
  });
});
