/**
 * Starts the host of one shared nodeset for the SharedHostManager, from the same nodeset
 * folders the runs use; each nodeset's host stderr is appended to
 * `<outputsDir>/shared-hosts/<nodeset>.stderr.log`, across restarts.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { spawnHost, type HostProcess } from '../../host/host-process.js';
import { llmCacheEnv } from '../../paths.js';
import type { GraphDirs } from '../run-graph.js';

export class SharedHostStarter {
  private readonly outputsDir: string;
  private readonly dirs: GraphDirs;
  private readonly logs = new Map<string, WriteStream>();

  constructor(outputsDir: string, dirs: GraphDirs) {
    this.outputsDir = outputsDir;
    this.dirs = dirs;
  }

  async start(nodeset: string): Promise<HostProcess> {
    const { NodesetRegistry } = await import('../../nodeset-registry/registry.js');
    const registry = await NodesetRegistry.scan({
      ...(this.dirs.builtinNodesetsDir ? { builtinDir: this.dirs.builtinNodesetsDir } : {}),
      ...(this.dirs.workspaceDir ? { workspaceDir: this.dirs.workspaceDir } : {}),
    });
    const entry = registry.get(nodeset);
    const logDir = join(this.outputsDir, 'shared-hosts');
    mkdirSync(logDir, { recursive: true });
    let logStream = this.logs.get(nodeset);
    if (!logStream) {
      logStream = createWriteStream(join(logDir, `${nodeset}.stderr.log`), { flags: 'a' });
      this.logs.set(nodeset, logStream);
    }
    const stream = logStream;
    // The llm response cache sits beside the runs it serves unless the backend's environment names one.
    return spawnHost({ entry, env: llmCacheEnv(this.outputsDir), onStderr: (line) => stream.write(line + '\n') });
  }

  /** Ends the log streams (once the hosts are stopped). */
  close(): void {
    for (const s of this.logs.values()) s.end();
    this.logs.clear();
  }
}
