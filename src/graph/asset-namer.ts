/**
 * Unique, safe file names for an episode's assets. A name depends only on what the same node
 * emitted before (never on which of two concurrent nodes finished first), so it is the same
 * on every run of the episode.
 */

/** The last path segment, letters, digits, `.`, `_`, `-` only, no leading dot, never empty: names come from handlers, possibly remote. */
export function safeAssetName(name: string): string {
  const cleaned = name
    .replace(/^.*[/\\]/, '')
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 120);
  return cleaned || 'asset';
}

export class AssetNamer {
  private readonly taken = new Set<string>();

  /** `<node>_<name>`; when the node already used that name: `s<step>_<node>_<name>`, then with the port. */
  claim(nodeId: string, step: number, port: string, requested: string): string {
    const base = safeAssetName(requested);
    const s = `s${String(step).padStart(4, '0')}`;
    for (const candidate of [`${nodeId}_${base}`, `${s}_${nodeId}_${base}`, `${s}_${nodeId}_${safeAssetName(port)}_${base}`]) {
      if (!this.taken.has(candidate)) {
        this.taken.add(candidate);
        return candidate;
      }
    }
    const dot = base.lastIndexOf('.');
    const [stem, ext] = dot > 0 ? [base.slice(0, dot), base.slice(dot)] : [base, ''];
    for (let k = 2; ; k++) {
      const candidate = `${s}_${nodeId}_${safeAssetName(port)}_${stem}-${k}${ext}`;
      if (!this.taken.has(candidate)) {
        this.taken.add(candidate);
        return candidate;
      }
    }
  }
}
