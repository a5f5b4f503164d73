/** The built-in datasets: their shape, and that the committed files are what the seeded generator writes. */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { DatasetCatalog, messagesOf } from '../../src/datasets/index.js';
import { BUILTIN_DATASETS_DIR, PACKAGE_ROOT } from '../../src/paths.js';

const catalog = new DatasetCatalog({ builtinDir: BUILTIN_DATASETS_DIR, workspaceDir: '' });
const clusters = (xs: Array<{ metadata: Record<string, unknown> }>) => [...new Set(xs.map((s) => s.metadata.cluster))].sort();

describe('built-in datasets', () => {
  it('arith: 80 test + 20 dev word problems with integer answers, every problem type in both splits', async () => {
    const d = await catalog.load('arith');
    expect(d.splitNames.sort()).toEqual(['dev', 'test']);
    expect(d.splits.test).toHaveLength(80);
    expect(d.splits.dev).toHaveLength(20);
    const all = [...d.splits.test!, ...d.splits.dev!];
    expect(all.every((s) => Number.isInteger(s.target) && typeof s.input === 'string')).toBe(true);
    expect(clusters(d.splits.test!)).toEqual(['addition', 'division', 'multi_step', 'multiplication', 'subtraction']);
    expect(clusters(d.splits.dev!)).toEqual(clusters(d.splits.test!));
    // The worked solution agrees with the target.
    for (const s of all) expect(String(s.metadata.solution)).toMatch(new RegExp(`= ${s.target}$`));
  });

  it('mcq: 60 four-way questions split by field, letter targets pointing into the choices', async () => {
    const d = await catalog.load('mcq');
    expect(d.splits.test!.length + d.splits.dev!.length).toBe(60);
    for (const s of [...d.splits.test!, ...d.splits.dev!]) {
      expect(s.choices).toHaveLength(4);
      expect(new Set(s.choices).size).toBe(4);
      expect(s.target).toMatch(/^[A-D]$/);
    }
    expect(clusters(d.splits.test!)).toHaveLength(6);
    const first = d.splits.test![0]!;
    expect(messagesOf(first)).toEqual([
      { role: 'user', content: `${first.input}\n\n${first.choices!.map((c, i) => `${'ABCD'[i]}. ${c}`).join('\n')}` },
    ]);
  });

  it('sentiment: 60 CSV sentences with labels positive/negative/neutral, every label in both splits', async () => {
    const d = await catalog.load('sentiment');
    expect(d.labels).toEqual(['positive', 'negative', 'neutral']);
    expect(d.splits.test).toHaveLength(48);
    expect(d.splits.dev).toHaveLength(12);
    for (const split of ['test', 'dev']) expect(new Set(d.splits[split]!.map((s) => s.target))).toEqual(new Set(d.labels));
    expect(clusters(d.splits.test!)).toEqual(['movie', 'product', 'restaurant', 'travel']);
  });

  it('the committed files are byte for byte what scripts/generate-datasets.mjs writes', async () => {
    const out = await mkdtemp(join(tmpdir(), 'gen-datasets-'));
    try {
      await execa(process.execPath, ['--import', 'tsx', join(PACKAGE_ROOT, 'scripts', 'generate-datasets.mjs'), out], {
        cwd: PACKAGE_ROOT,
      });
      for (const name of ['arith', 'mcq', 'sentiment']) {
        const files = (await readdir(join(out, name))).sort();
        expect((await readdir(join(BUILTIN_DATASETS_DIR, name))).sort()).toEqual(files);
        for (const f of files) {
          expect(await readFile(join(out, name, f), 'utf8'), `${name}/${f}`).toBe(
            await readFile(join(BUILTIN_DATASETS_DIR, name, f), 'utf8'),
          );
        }
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});

describe('messagesOf', () => {
  it('puts the choices under the last user message of a chat input and copies the messages', () => {
    const input = [
      { role: 'system' as const, content: 'Answer with a letter.' },
      { role: 'user' as const, content: 'Which?' },
      { role: 'assistant' as const, content: 'Hmm' },
    ];
    const out = messagesOf({ input, choices: ['yes', 'no'] });
    expect(out).toEqual([input[0], { role: 'user', content: 'Which?\n\nA. yes\nB. no' }, input[2]]);
    expect(input[1]!.content).toBe('Which?');
    expect(messagesOf({ input: 'Plain' })).toEqual([{ role: 'user', content: 'Plain' }]);
  });
});
