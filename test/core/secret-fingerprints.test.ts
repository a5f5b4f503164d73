import { describe, expect, it } from 'vitest';
import { fingerprintSecrets, redactFingerprinted, SECRET_FINGERPRINTS_ENV } from '../../src/core/secret-fingerprints.js';

const KEY = 'sk-live-0123456789abcdefXYZ';
const OTHER = 'gsk_another-key-value-42';
const envWith = (...values: string[]) => ({ [SECRET_FINGERPRINTS_ENV]: fingerprintSecrets(values) });

describe('secret fingerprints', () => {
  it('redact every occurrence of each key, wherever it is, and nothing else', () => {
    const env = envWith(KEY, OTHER);
    expect(redactFingerprinted(`${KEY}`, env)).toBe('[redacted]');
    expect(redactFingerprinted(`a ${KEY} b ${OTHER}\n${KEY}${KEY}`, env)).toBe('a [redacted] b [redacted]\n[redacted][redacted]');
    expect(redactFingerprinted(`héllo ✓ ${KEY.slice(0, -1)} and ${KEY.slice(1)}`, env)).toBe(
      `héllo ✓ ${KEY.slice(0, -1)} and ${KEY.slice(1)}`,
    );
    expect(redactFingerprinted('', env)).toBe('');
  });

  it('hold neither key nor any part of one, and skip values too short to fingerprint safely', () => {
    const raw = fingerprintSecrets([KEY, 'short']);
    expect(raw).not.toContain(KEY.slice(0, 8));
    expect(JSON.parse(raw).keys).toHaveLength(1);
    expect(redactFingerprinted('short', { [SECRET_FINGERPRINTS_ENV]: raw })).toBe('short');
  });

  it('add to earlier fingerprints with the same salt; without any, or with unreadable ones, text is unchanged', () => {
    const first = fingerprintSecrets([KEY]);
    const both = fingerprintSecrets([OTHER, KEY], first);
    expect(JSON.parse(both).salt).toBe(JSON.parse(first).salt);
    expect(JSON.parse(both).keys).toHaveLength(2);
    expect(redactFingerprinted(`${OTHER}/${KEY}`, { [SECRET_FINGERPRINTS_ENV]: both })).toBe('[redacted]/[redacted]');
    expect(redactFingerprinted(KEY, {})).toBe(KEY);
    expect(redactFingerprinted(KEY, { [SECRET_FINGERPRINTS_ENV]: '{not json' })).toBe(KEY);
  });

  it('find a key in a long output with many near misses', () => {
    const env = envWith(KEY);
    const noise = 'x'.repeat(5000) + KEY.slice(0, 20) + 'y'.repeat(3000);
    expect(redactFingerprinted(noise + KEY + noise, env)).toBe(`${noise}[redacted]${noise}`);
  });
});
