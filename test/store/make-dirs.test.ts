import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeDirs } from '../../src/store/make-dirs.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'make-dirs-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('makeDirs', () => {
  it('makes a folder and its missing parents, and leaves one that exists alone', () => {
    const deep = join(dir, 'a', 'b', 'c');
    makeDirs(deep);
    expect(statSync(deep).isDirectory()).toBe(true);
    makeDirs(deep);
    makeDirs(dir);
  });

  it('refuses a path through a file, naming it', () => {
    writeFileSync(join(dir, 'file'), 'x');
    expect(() => makeDirs(join(dir, 'file', 'sub'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
    expect(() => makeDirs(join(dir, 'file'))).toThrow(`${join(dir, 'file')} is a file, not a folder`);
    expect(() => makeDirs(join(dir, 'file', 'sub', 'deeper'))).toThrow(
      `cannot make the folder ${join(dir, 'file', 'sub', 'deeper')}: ${join(dir, 'file')} is a file, not a folder`,
    );
  });

  it.runIf(existsSync('/proc/self'))('fails at once under /proc, where a recursive mkdir spins for ever', () => {
    expect(() => makeDirs('/proc/no-such-outputs/eval_runs')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });
});
