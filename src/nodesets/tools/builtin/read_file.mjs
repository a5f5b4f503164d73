#!/usr/bin/env node
// read_file tool: reads {"path": "..."} as JSON on stdin and prints that file of the working
// directory (the subprocess's cwd). Paths that leave the working directory, also through a
// symbolic link, are refused; errors name the path as given, never the absolute one.
import { realpathSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';

const MAX_BYTES = 1 << 20;

function inside(root, target) {
  const rel = relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

async function main() {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  const args = JSON.parse(text || '{}');
  const path = args?.path;
  if (typeof path !== 'string' || path === '') throw new Error('argument "path" must be a non-empty string');
  const root = realpathSync(process.cwd());
  let real;
  try {
    real = realpathSync(resolve(root, path));
  } catch {
    throw new Error(`no such file: ${path}`);
  }
  if (!inside(root, real)) throw new Error(`${path} is outside the working directory`);
  const st = statSync(real);
  if (!st.isFile()) throw new Error(`${path} is not a file`);
  if (st.size > MAX_BYTES) throw new Error(`${path} is larger than ${MAX_BYTES} bytes`);
  process.stdout.write(readFileSync(real));
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
