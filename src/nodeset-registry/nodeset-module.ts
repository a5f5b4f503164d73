/** Loads the JS handler module a manifest names (`module`, relative to the nodeset's folder). */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HostError, errorMessage } from '../errors.js';
import type { NodesetManifest, NodesetModule } from '../core/types.js';

export async function loadNodesetModule(dir: string, manifest: NodesetManifest): Promise<NodesetModule> {
  if (!manifest.module) {
    throw new HostError(`nodeset "${manifest.name}" has no JS module (it runs the command ${JSON.stringify(manifest.command)})`);
  }
  const file = resolve(dir, manifest.module);
  let ns: { default?: unknown };
  try {
    ns = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (err) {
    throw new HostError(`nodeset "${manifest.name}": cannot load module ${file}: ${errorMessage(err)}`, { cause: err });
  }
  const mod = ns.default;
  if (typeof mod !== 'object' || mod === null) {
    throw new HostError(
      `nodeset "${manifest.name}": module ${file} has no default export of handlers (functions, batched, panel, evict, init)`,
    );
  }
  return mod as NodesetModule;
}
