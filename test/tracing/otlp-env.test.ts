/** Which environment turns tracing on, and the W3C traceparent handed to child processes. */
import { describe, expect, it } from 'vitest';
import { otlpTracesUrl } from '../../src/tracing/otlp-env.js';
import { formatTraceparent, parseTraceparent } from '../../src/tracing/traceparent.js';
import { activeTracing, shutdownTracing, startTracing } from '../../src/tracing/tracing.js';

describe('otlpTracesUrl', () => {
  it('is off without an endpoint, and takes the traces endpoint as given or the base one with /v1/traces', () => {
    expect(otlpTracesUrl({})).toBeNull();
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeNull();
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toBe('http://c:4318/v1/traces');
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/x' })).toBe(
      'http://t/x',
    );
  });
  it('is off when the SDK is disabled or the traces exporter is none', () => {
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_SDK_DISABLED: 'TRUE' })).toBeNull();
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_TRACES_EXPORTER: 'otlp' })).toBe('http://c/v1/traces');
  });
});

describe('traceparent', () => {
  it('round-trips and refuses what is not one', () => {
    const ids = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', flags: 1 };
    expect(formatTraceparent(ids)).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    expect(parseTraceparent(formatTraceparent(ids))).toEqual(ids);
    expect(parseTraceparent(undefined)).toBeNull();
    expect(parseTraceparent('00-00000000000000000000000000000000-00f067aa0ba902b7-01')).toBeNull();
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7')).toBeNull();
  });
});

describe('startTracing', () => {
  it('with no endpoint loads nothing, and shutting down (twice) is harmless', async () => {
    expect(await startTracing({ role: 'test', env: {} })).toBeUndefined();
    expect(activeTracing()).toBeUndefined();
    await shutdownTracing();
    await shutdownTracing();
  });
});
