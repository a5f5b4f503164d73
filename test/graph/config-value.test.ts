/** A config value against its manifest declaration: type, range, and the values an `enum` allows. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConfigKeySpec } from '../../src/core/types.js';
import { configValueProblem } from '../../src/graph/config-value.js';
import { PACKAGE_ROOT } from '../../src/paths.js';

describe('configValueProblem', () => {
  it('takes only the values an enum lists, naming them, and passes null as unset', () => {
    const decl: ConfigKeySpec = { enum: ['auto', true, false] };
    for (const ok of ['auto', true, false, null]) expect(configValueProblem(decl, ok)).toBeUndefined();
    expect(configValueProblem(decl, 'maybe')).toBe('must be one of "auto", true, false, got "maybe"');
    expect(configValueProblem(decl, 1)).toBe('must be one of "auto", true, false, got 1');
  });

  it("refuses llm's cache modes other than auto, true and false before anything runs", () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'src', 'nodesets', 'llm', 'manifest.json'), 'utf8')) as {
      functions: Array<{ name: string; config?: Record<string, ConfigKeySpec> }>;
    };
    const caches = manifest.functions.flatMap((f) => (f.config?.cache ? [f.config.cache] : []));
    expect(caches.length).toBeGreaterThan(0);
    for (const decl of caches) {
      expect(configValueProblem(decl, 'maybe')).toContain('must be one of "auto", true, false');
      expect(configValueProblem(decl, false)).toBeUndefined();
    }
  });
});
