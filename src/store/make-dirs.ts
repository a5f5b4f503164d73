/**
 * makeDirs: a folder and its missing parents, made one at a time. Node's `mkdir(…, { recursive:
 * true })` never returns for a path under a filesystem that answers every mkdir with ENOENT
 * (`/proc/nope`: a user's mistyped `--outputs`), spinning a core; made one level at a time, the
 * first refusal is an error naming the path.
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export function makeDirs(path: string): void {
  const missing: string[] = [];
  for (let p = resolve(path); ; ) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch (err) {
      // ENOTDIR: something above is a file; walk up to it and say so.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      missing.push(p);
      const parent = dirname(p);
      if (parent === p) break;
      p = parent;
      continue;
    }
    if (!isDir)
      throw Object.assign(new Error(`cannot make the folder ${resolve(path)}: ${p} is a file, not a folder`), { code: 'ENOTDIR', path: p });
    break;
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
