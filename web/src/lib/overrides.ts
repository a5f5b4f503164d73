/** Checks the overrides text of a form: JSON, an object of node id → config patch object. */
export type OverridesCheck =
  | { ok: true; value: Record<string, Record<string, unknown>> | null; warning: string | null }
  | { ok: false; error: string };

export function checkOverrides(text: string, nodeIds: string[]): OverridesCheck {
  if (!text.trim()) return { ok: true, value: null, warning: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `not valid JSON: ${(err as Error).message}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, error: 'must be a JSON object of node id → config patch, e.g. {"env": {"step_latency_ms": 20}}' };
  }
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      return { ok: false, error: `the patch for "${k}" must be an object, got ${JSON.stringify(v)}` };
  }
  const unknown = nodeIds.length ? Object.keys(parsed).filter((k) => !nodeIds.includes(k)) : [];
  return {
    ok: true,
    value: parsed as Record<string, Record<string, unknown>>,
    warning: unknown.length ? `the graph has no node ${unknown.map((u) => `"${u}"`).join(', ')} (nodes: ${nodeIds.join(', ')})` : null,
  };
}
