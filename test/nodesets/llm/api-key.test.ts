import { describe, expect, it } from 'vitest';
import { keyVariableRefusal, redact } from '../../../src/nodesets/llm/api-key.js';
import { readLlmConfig } from '../../../src/nodesets/llm/llm-config.js';

describe('the variables an llm node may read its key from', () => {
  it.each(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'VLLM_API_KEY', 'AZURE_OPENAI_API_KEY', ''])('%j may be read', (name) => {
    expect(keyVariableRefusal(name, {})).toBeUndefined();
  });

  it.each(['AWS_SECRET_ACCESS_KEY', 'DATABASE_URL', 'HOME', 'GITHUB_TOKEN', 'EVAL_API_TOKEN', 'EVAL_API_KEY', 'openai_api_key'])(
    '%j is refused, naming the rule',
    (name) => {
      expect(keyVariableRefusal(name, {})).toMatch(/does not name a model-API key.*_API_KEY.*EVAL_LLM_KEY_VARS/);
    },
  );

  it('EVAL_LLM_KEY_VARS lets the server name others, never an EVAL_ one', () => {
    const env = { EVAL_LLM_KEY_VARS: ' HF_TOKEN , TOGETHER_KEY,EVAL_API_TOKEN' };
    expect(keyVariableRefusal('HF_TOKEN', env)).toBeUndefined();
    expect(keyVariableRefusal('TOGETHER_KEY', env)).toBeUndefined();
    expect(keyVariableRefusal('EVAL_API_TOKEN', env)).toMatch(/never an EVAL_ one/);
    expect(keyVariableRefusal('GITHUB_TOKEN', env)).toBeDefined();
  });

  it('a malformed name is refused as before', () => {
    expect(keyVariableRefusal('A-B', {})).toMatch(/must be the name of an environment variable, got "A-B"/);
  });

  it('the host refuses the same names, whatever reached its config', () => {
    expect(() => readLlmConfig({ model: 'm', api_key_env: 'DATABASE_URL' }, {})).toThrow(/does not name a model-API key/);
    expect(readLlmConfig({ model: 'm', api_key_env: 'X_API_KEY' }, {}).apiKeyEnv).toBe('X_API_KEY');
  });

  it('redact hides a key wherever it occurs', () => {
    expect(redact('401: bad key sk-abc123 (sk-abc123)', 'sk-abc123')).toBe('401: bad key [redacted] ([redacted])');
  });
});

describe('the base URL an llm node calls', () => {
  it.each(['notaurl', 'ftp://127.0.0.1/v1', '127.0.0.1:8000/v1'])('%j is refused as config, not tried as a connection', (url) => {
    expect(() => readLlmConfig({ model: 'm', base_url: url, api_key_env: '' }, {})).toThrow(
      `config base_url must be an http:// or https:// URL (up to /v1), got ${JSON.stringify(url)}`,
    );
  });

  it('an http(s) URL is kept, without its trailing slash; OPENAI_BASE_URL is checked the same way', () => {
    expect(readLlmConfig({ model: 'm', base_url: 'http://127.0.0.1:8000/v1/', api_key_env: '' }, {}).baseURL).toBe(
      'http://127.0.0.1:8000/v1',
    );
    expect(readLlmConfig({ model: 'm', api_key_env: '' }, {}).baseURL).toBe('https://api.openai.com/v1');
    expect(() => readLlmConfig({ model: 'm', api_key_env: '' }, { OPENAI_BASE_URL: 'localhost' })).toThrow(/must be an http/);
  });
});
