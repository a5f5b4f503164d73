import { describe, expect, it } from 'vitest';
import { heldModelKeys, isModelKeyVariable, modelKey, takeModelKeys, withoutModelKeys } from '../../src/core/model-keys.js';
import { redactFingerprinted, SECRET_FINGERPRINTS_ENV } from '../../src/core/secret-fingerprints.js';

describe('model keys', () => {
  it('leave the environment at start for memory, with their fingerprints published in their place', () => {
    const env: NodeJS.ProcessEnv = {
      PATH: '/usr/bin',
      OPENAI_API_KEY: 'sk-taken-from-env-0001',
      MY_GATEWAY_SECRET: 'gw-listed-secret-0002',
      EVAL_LLM_KEY_VARS: 'MY_GATEWAY_SECRET',
      DATABASE_URL: 'postgres://kept',
    };
    takeModelKeys(env);
    expect(env.OPENAI_API_KEY).toBeUndefined();
    expect(env.MY_GATEWAY_SECRET).toBeUndefined();
    expect(env.DATABASE_URL).toBe('postgres://kept');
    expect(env[SECRET_FINGERPRINTS_ENV]).not.toContain('sk-taken');
    expect(modelKey('OPENAI_API_KEY', env)).toBe('sk-taken-from-env-0001');
    expect(modelKey('MY_GATEWAY_SECRET', env)).toBe('gw-listed-secret-0002');
    expect(heldModelKeys(env)).toMatchObject({ OPENAI_API_KEY: 'sk-taken-from-env-0001' });
    expect(redactFingerprinted('a sk-taken-from-env-0001 b gw-listed-secret-0002', env)).toBe('a [redacted] b [redacted]');
  });

  it('are scrubbed from an environment handed to a child', () => {
    expect(isModelKeyVariable('ANTHROPIC_API_KEY')).toBe(true);
    expect(isModelKeyVariable('EVAL_API_TOKEN')).toBe(false);
    expect(withoutModelKeys({ A_API_KEY: 'x', X: 'kept', U: undefined, K: 'y', EVAL_LLM_KEY_VARS: 'K' })).toEqual({
      X: 'kept',
      EVAL_LLM_KEY_VARS: 'K',
    });
  });
});
