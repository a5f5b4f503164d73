#!/usr/bin/env node
// list_dir tool: reads {"path": "."} as JSON on stdin and prints the entries of that folder of
// the working directory, one a line, sorted, folders with a trailing "/". Paths that leave the
// working directory, also through a symbolic link, are refused.
import { readdirSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';

function inside(root, target) {
  const rel = relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

async function main() {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  const args = JSON.parse(text || '{}');
  const path = args?.path ?? '.';
  if (typeof path !== 'string') throw new Error('argument "path" must be a string');
  const root = realpathSync(process.cwd());
  let real;
  try {
    real = realpathSync(resolve(root, path || '.'));
  } catch {
    throw new Error(`no such folder: ${path}`);
  }
  if (!inside(root, real)) throw new Error(`${path} is outside the working directory`);
  const entries = readdirSync(real, { withFileTypes: true })
    .filter((e) => !(real === root && e.name === '.tmp'))
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort();
  process.stdout.write(entries.length ? `${entries.join('\n')}\n` : '(empty)\n');
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
