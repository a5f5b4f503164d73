/**
 * A stand-in OpenTelemetry collector for tests: OTLP/HTTP on 127.0.0.1 (port 0), `POST /v1/traces`
 * with the JSON encoding (gzip or not), answering `{}` as a collector does. Keeps every span it
 * received, flattened, and the headers of each request.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
  /** Resource attributes of the process that sent it. */
  resource: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  events: Array<{ name: string; attributes: Record<string, string | number | boolean> }>;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  requests: Array<{ path: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', headers: req.headers });
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      spans.push(...flatten(JSON.parse(body.toString('utf8'))));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function flatten(body: unknown): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  const rs = (body as { resourceSpans?: unknown[] }).resourceSpans ?? [];
  for (const r of rs as Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: unknown[] }> }>) {
    const resource = attrs(r.resource?.attributes);
    for (const ss of r.scopeSpans ?? []) {
      for (const s of (ss.spans ?? []) as Array<Record<string, unknown>>) {
        out.push({
          traceId: hexId(s.traceId),
          spanId: hexId(s.spanId),
          parentSpanId: hexId(s.parentSpanId),
          name: String(s.name),
          startNs: BigInt(String(s.startTimeUnixNano)),
          endNs: BigInt(String(s.endTimeUnixNano)),
          attributes: attrs(s.attributes as KeyValue[] | undefined),
          resource,
          status: (s.status ?? {}) as ReceivedSpan['status'],
          events: ((s.events ?? []) as Array<{ name: string; attributes?: KeyValue[] }>).map((e) => ({
            name: e.name,
            attributes: attrs(e.attributes),
          })),
        });
      }
    }
  }
  return out;
}

/** OTLP/JSON ids are hex; an encoder that sends protobuf-style base64 is read too. */
function hexId(v: unknown): string {
  if (typeof v !== 'string' || v === '') return '';
  return /^[0-9a-f]+$/i.test(v) && (v.length === 32 || v.length === 16) ? v.toLowerCase() : Buffer.from(v, 'base64').toString('hex');
}

function attrs(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}
