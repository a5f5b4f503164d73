/**
 * The wait an overloaded endpoint asks for, in ms: `retry-after-ms` (OpenAI's), else
 * `Retry-After` as seconds or as an HTTP date; undefined when neither is there or readable.
 */
export function retryAfterMs(
  headers: Headers | Record<string, string | null | undefined> | undefined,
  now = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const get = (name: string): string | undefined =>
    (headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()])) ?? undefined;
  const ms = get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms));
  const after = get('retry-after')?.trim();
  if (!after) return undefined;
  if (/^\d+(\.\d+)?$/.test(after)) return Math.round(Number(after) * 1000);
  const at = Date.parse(after);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
