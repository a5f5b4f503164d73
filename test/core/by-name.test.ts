import { describe, expect, it } from 'vitest';
import { byName } from '../../src/core/by-name.js';

describe('byName', () => {
  it('orders by code units, whatever the machine locale: capitals before small letters, digits first', () => {
    const names = ['env_b', 'Env_a', 'env_a', '2d_env', 'émile', 'zeta'].map((name) => ({ name }));
    expect(names.sort(byName).map((n) => n.name)).toEqual(['2d_env', 'Env_a', 'env_a', 'env_b', 'zeta', 'émile']);
  });

  it('puts a name before the longer names it begins', () => {
    expect([{ name: 'policy_mlp' }, { name: 'policy' }].sort(byName).map((n) => n.name)).toEqual(['policy', 'policy_mlp']);
  });
});
