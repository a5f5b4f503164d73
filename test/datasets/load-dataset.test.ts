/** The dataset loader on real files in a temp dir: every format, splits, ids, errors naming file and line, the cache. */
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DatasetCatalog, DatasetInvalidError, contentId, loadDataset } from '../../src/datasets/index.js';
import { writeParquet } from '../fixtures/write-parquet.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'datasets-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Writes `files` into `<root>/<name>/` and returns the folder. */
async function folder(name: string, files: Record<string, string | ((dir: string) => void)>): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  for (const [f, body] of Object.entries(files)) {
    if (typeof body === 'string') await writeFile(join(dir, f), body);
    else body(join(dir, f));
  }
  return dir;
}
const load = (dir: string, name = 'd') => loadDataset(dir, name, 'workspace');
const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

async function failure(p: Promise<unknown>): Promise<DatasetInvalidError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DatasetInvalidError);
  return err as DatasetInvalidError;
}

describe('formats', () => {
  it('JSONL: one split per file, samples in file order, every target kind, chat input, loose keys into metadata', async () => {
    const dir = await folder('j', {
      'test.jsonl': jsonl([
        { id: 'a', input: 'What is 2+2?', target: 4, metadata: { cluster: 'sum' } },
        {
          id: 7,
          input: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Capital of France?' },
          ],
          target: ['Paris', 'paris'],
        },
        { id: 'c', input: 'Pick one', choices: ['x', 'y'], target: 'B', difficulty: 'hard', metadata: { difficulty: 'easy' } },
      ]),
      'train.jsonl': `\n${JSON.stringify({ id: 't0', input: 'hi' })}\n\n`,
    });
    const d = await load(dir);
    expect(d.splitNames).toEqual(['test', 'train']);
    expect(d.defaultSplit).toBe('test');
    expect(d.splits.test).toEqual([
      { id: 'a', input: 'What is 2+2?', target: 4, metadata: { cluster: 'sum' } },
      {
        id: '7',
        input: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Capital of France?' },
        ],
        target: ['Paris', 'paris'],
        metadata: {},
      },
      // The record's own metadata wins over a loose key of the same name.
      { id: 'c', input: 'Pick one', choices: ['x', 'y'], target: 'B', metadata: { difficulty: 'easy' } },
    ]);
    expect(d.splits.train).toEqual([{ id: 't0', input: 'hi', metadata: {} }]);
  });

  it('JSON array: records as in JSONL', async () => {
    const dir = await folder('a', {
      'dev.json': JSON.stringify(
        [
          { id: 'q1', input: 'a', target: 'x' },
          { id: 'q2', input: 'b', target: 2.5 },
        ],
        null,
        2,
      ),
    });
    const d = await load(dir);
    expect(d.splits.dev!.map((s) => [s.id, s.target])).toEqual([
      ['q1', 'x'],
      ['q2', 2.5],
    ]);
  });

  it('CSV: header row, choices split on | or given as JSON, JSON cells parsed, other columns into metadata, empty cells absent', async () => {
    const dir = await folder('c', {
      'test.csv': [
        'id,input,target,choices,cluster,metadata',
        'r1,"Which is red?",A,apple|sky|grass,colour,',
        'r2,"Say ""hi""","[""hi"",""hello""]","[""a, b"",""c""]",greet,"{""source"":""web""}"',
        'r3,plain,,,,',
      ].join('\n'),
    });
    const d = await load(dir);
    expect(d.splits.test).toEqual([
      { id: 'r1', input: 'Which is red?', target: 'A', choices: ['apple', 'sky', 'grass'], metadata: { cluster: 'colour' } },
      { id: 'r2', input: 'Say "hi"', target: ['hi', 'hello'], choices: ['a, b', 'c'], metadata: { cluster: 'greet', source: 'web' } },
      { id: 'r3', input: 'plain', metadata: {} },
    ]);
  });

  it('CSV: a cell that starts with a bracket but is not JSON is text; a metadata cell that starts like JSON must be JSON', async () => {
    const dir = await folder('cj', {
      'test.csv': [
        'id,input,target,choices',
        'r1,"[1, 2, 3] What is the sum of the list?",[6] six,[1] one|[6] six',
        'r2,{braces} first,{x},',
      ].join('\n'),
    });
    expect((await load(dir)).splits.test).toEqual([
      { id: 'r1', input: '[1, 2, 3] What is the sum of the list?', target: '[6] six', choices: ['[1] one', '[6] six'], metadata: {} },
      { id: 'r2', input: '{braces} first', target: '{x}', metadata: {} },
    ]);
    const meta = await folder('cm', { 'test.csv': 'id,input,metadata\nr1,hi,{not json}\n' });
    expect((await failure(load(meta))).message).toMatch(
      new RegExp(`^${join(meta, 'test.csv')}:2: field "metadata": cell starts like JSON but is not`),
    );
  });

  it('Parquet (hyparquet): one record per row, 64-bit integers as numbers, extra columns into metadata', async () => {
    const dir = await folder('p', {
      'test.parquet': (f) =>
        writeParquet(f, [
          { name: 'id', type: 'string', values: ['p0', 'p1', 'p2'] },
          { name: 'input', type: 'string', values: ['7 × 6?', 'Ünïcode ✓', 'half of 5?'] },
          { name: 'target', type: 'int64', values: [42, -1, 3] },
          { name: 'cluster', type: 'string', values: ['mul', 'text', 'div'] },
          { name: 'weight', type: 'double', values: [0.5, 1, 2.25] },
        ]),
    });
    const d = await load(dir);
    expect(d.splits.test).toEqual([
      { id: 'p0', input: '7 × 6?', target: 42, metadata: { cluster: 'mul', weight: 0.5 } },
      { id: 'p1', input: 'Ünïcode ✓', target: -1, metadata: { cluster: 'text', weight: 1 } },
      { id: 'p2', input: 'half of 5?', target: 3, metadata: { cluster: 'div', weight: 2.25 } },
    ]);
  });

  it('Parquet: a row with a bad field is named by file, row and field; a file that is not Parquet by file', async () => {
    const bad = await folder('pb', {
      'test.parquet': (f) =>
        writeParquet(f, [
          { name: 'id', type: 'string', values: ['p0', 'p1'] },
          { name: 'input', type: 'string', values: ['ok', ''] },
        ]),
    });
    const e1 = await failure(load(bad));
    expect(e1.message).toBe(`${join(bad, 'test.parquet')} row 2: field "input": must not be empty`);
    const junk = await folder('pj', { 'test.parquet': 'not parquet at all' });
    const e2 = await failure(load(junk));
    expect(e2.message).toMatch(new RegExp(`^${join(junk, 'test.parquet')}: not a readable Parquet file`));
    expect(e2.code).toBe('DATASET_INVALID');
  });
});

describe('splits', () => {
  it('a split field sends records to that split (file order kept); records without one stay in the file’s split', async () => {
    const dir = await folder('s', {
      'all.jsonl': jsonl([
        { id: '1', input: 'a', split: 'train' },
        { id: '2', input: 'b', split: 'test' },
        { id: '3', input: 'c' },
        { id: '4', input: 'd', split: 'train' },
      ]),
      'dataset.json': JSON.stringify({ defaultSplit: 'train', description: 'mixed' }),
    });
    const d = await load(dir);
    expect(d.splitNames).toEqual(['train', 'test', 'all']);
    expect(Object.fromEntries(Object.entries(d.splits).map(([k, v]) => [k, v.map((s) => s.id)]))).toEqual({
      train: ['1', '4'],
      test: ['2'],
      all: ['3'],
    });
    expect(d.defaultSplit).toBe('train');
    expect(d.description).toBe('mixed');
  });

  it('files are read in name order, so a split spread over files keeps a fixed order', async () => {
    const dir = await folder('o', {
      'b.jsonl': jsonl([{ id: 'b1', input: 'x', split: 'test' }]),
      'a.jsonl': jsonl([{ id: 'a1', input: 'x', split: 'test' }]),
    });
    expect((await load(dir)).splits.test!.map((s) => s.id)).toEqual(['a1', 'b1']);
  });
});

describe('ids', () => {
  it('an id made from the content is stable: the same across formats and key orders, different for other content', async () => {
    const rec = { input: 'What is 3+4?', target: 7, metadata: { cluster: 'sum' } };
    const dir = await folder('h', {
      'test.jsonl': jsonl([rec, { metadata: { cluster: 'sum' }, target: 7, input: 'What is 3+4?', split: 'other' }, { ...rec, target: 8 }]),
      'dev.json': JSON.stringify([rec]),
    });
    const d = await load(dir);
    const id = contentId(rec);
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(d.splits.test!.map((s) => s.id)).toEqual([id, contentId({ ...rec, target: 8 })]);
    expect(d.splits.other![0]!.id).toBe(id);
    expect(d.splits.dev![0]!.id).toBe(id);
    expect(contentId({ ...rec, target: 8 })).not.toBe(id);
    // The same bytes in a fresh load give the same ids.
    expect((await load(await folder('h2', { 'test.jsonl': jsonl([rec]) }))).splits.test![0]!.id).toBe(id);
  });

  it('two records with one id in a split: the second is named with the first', async () => {
    const dir = await folder('dup', { 'test.jsonl': jsonl([{ input: 'same' }, { input: 'other' }, { input: 'same' }]) });
    const file = join(dir, 'test.jsonl');
    const e = await failure(load(dir));
    expect(e.message).toMatch(new RegExp(`^${file}:3: field "id": id "[0-9a-f]{16}" is already used in split "test" by ${file}:1`));
  });
});

describe('errors name the file, the line and the field', () => {
  it.each([
    ['a line that is not JSON', '{"input":"a"}\n{"input":"b"}\n{"input": nope}\n', ':3: not valid JSON'],
    ['a record that is not an object', '{"input":"a"}\n[1,2]\n', ':2: a record must be a JSON object'],
    ['no input', '{"input":"a"}\n\n{"target":"b"}\n', ':3: field "input": is missing'],
    ['a bad target', '{"input":"a","target":{"x":1}}\n', ':1: field "target": must be a string, a non-empty list of strings or a number'],
    ['bad choices', '{"input":"a","choices":["only"]}\n', ':1: field "choices": must be a list of 2 to 26 strings'],
    [
      'a bad chat message',
      '{"input":[{"role":"user","content":"a"},{"role":"robot","content":"b"}]}\n',
      ':1: field "input[1]": must be { role',
    ],
    ['a bad cluster', '{"input":"a","metadata":{"cluster":["x"]}}\n', ':1: field "metadata.cluster": must be a string or a number'],
    ['an id with a slash', '{"id":"a/b","input":"a"}\n', ':1: field "id": must not contain "/"'],
  ])('JSONL: %s', async (_what, body, expected) => {
    const dir = await folder('e', { 'test.jsonl': body });
    const e = await failure(load(dir));
    expect(e.code).toBe('DATASET_INVALID');
    expect(e.message.startsWith(`${join(dir, 'test.jsonl')}${expected}`), e.message).toBe(true);
  });

  it('JSON array: the line the bad element starts on; a syntax error at its line', async () => {
    const body = '[\n  {"id": "a", "input": "x"},\n  {\n    "id": "b",\n    "input": "y",\n    "target": true\n  }\n]\n';
    const dir = await folder('ja', { 'test.json': body });
    expect((await failure(load(dir))).message).toMatch(new RegExp(`^${join(dir, 'test.json')}:3: field "target"`));
    const broken = await folder('jb', { 'test.json': '[\n {"input": "a"},\n {"input": }\n]' });
    expect((await failure(load(broken))).message).toMatch(new RegExp(`^${join(broken, 'test.json')}:3: not valid JSON`));
    const notArray = await folder('jc', { 'test.json': '{"input": "a"}' });
    expect((await failure(load(notArray))).message).toContain('must hold one array of records');
  });

  it('CSV: the line of the bad record (a quoted cell spanning lines counts its lines), and a malformed file', async () => {
    const dir = await folder('ce', { 'test.csv': 'id,input,target\nr1,"two\nlines",ok\nr2,,x\n' });
    expect((await failure(load(dir))).message).toBe(
      `${join(dir, 'test.csv')}:4: field "input": is missing (a string or a list of chat messages)`,
    );
    const bad = await folder('cb', { 'test.csv': 'id,input\nr1,a,extra\n' });
    expect((await failure(load(bad))).message).toMatch(new RegExp(`^${join(bad, 'test.csv')}:2: not valid CSV`));
    // An unclosed quote is named where its record began, not at the end of the file csv-parse reached.
    const open = await folder('cq', { 'test.csv': 'id,input\nr1,hé\nr2,"oops\nr3,x\nr4,y\n' });
    expect((await failure(load(open))).message).toBe(
      `${join(open, 'test.csv')}:3: not valid CSV (a quoted cell in the record that starts on this line is never closed)`,
    );
    const twice = await folder('cd', { 'test.csv': 'id,input,input\nr1,hi,bye\n' });
    expect((await failure(load(twice))).message).toBe(`${join(twice, 'test.csv')}:1: the header names column "input" twice`);
  });

  it('labels: a target outside the label set is refused; labels: true takes the sorted targets', async () => {
    const dir = await folder('l', {
      'test.jsonl': jsonl([
        { input: 'good', target: 'pos' },
        { input: 'meh', target: 'neutral' },
      ]),
      'dataset.json': JSON.stringify({ labels: ['pos', 'neg'] }),
    });
    expect((await failure(load(dir))).message).toBe(
      `${join(dir, 'test.jsonl')}:2: field "target": "neutral" is not one of the labels pos, neg`,
    );
    const derived = await folder('l2', {
      'test.jsonl': jsonl([
        { input: 'a', target: 'z' },
        { input: 'b', target: 'a' },
        { input: 'c', target: 'z' },
      ]),
      'dataset.json': JSON.stringify({ labels: true }),
    });
    expect((await load(derived)).labels).toEqual(['a', 'z']);
  });

  it('dataset.json: an unknown key or a default split without samples is named', async () => {
    const dir = await folder('m', { 'test.jsonl': jsonl([{ input: 'a' }]), 'dataset.json': JSON.stringify({ descripton: 'typo' }) });
    expect((await failure(load(dir))).message).toMatch(new RegExp(`^${join(dir, 'dataset.json')}: .*descripton`));
    const split = await folder('m2', { 'test.jsonl': jsonl([{ input: 'a' }]), 'dataset.json': JSON.stringify({ defaultSplit: 'dev' }) });
    expect((await failure(load(split))).message).toBe(
      `${join(split, 'dataset.json')}: field "defaultSplit": split "dev" has no samples; splits: test`,
    );
  });

  it('fields: a mapping reads samples from other keys', async () => {
    const dir = await folder('f', {
      'test.jsonl': jsonl([{ question: 'q?', answer: 'a', uid: 'u1' }]),
      'dataset.json': JSON.stringify({ fields: { input: 'question', target: 'answer', id: 'uid' } }),
    });
    expect((await load(dir)).splits.test).toEqual([{ id: 'u1', input: 'q?', target: 'a', metadata: {} }]);
  });
});

describe('cache and catalog', () => {
  it('answers the same parse while the files are unchanged, and reads again after one changes', async () => {
    const dir = await folder('k', { 'test.jsonl': jsonl([{ id: '1', input: 'a' }]) });
    const first = await load(dir);
    expect(await load(dir)).toBe(first);
    await writeFile(
      join(dir, 'test.jsonl'),
      jsonl([
        { id: '1', input: 'a' },
        { id: '2', input: 'b' },
      ]),
    );
    const later = new Date(Date.now() + 5000);
    await utimes(join(dir, 'test.jsonl'), later, later);
    const again = await load(dir);
    expect(again).not.toBe(first);
    expect(again.splits.test).toHaveLength(2);
  });

  it('a workspace dataset hides a built-in one of the same name; an unknown name is NOT_FOUND listing the known ones', async () => {
    const builtin = join(root, 'builtin');
    await mkdir(join(builtin, 'shared'), { recursive: true });
    await mkdir(join(builtin, 'only_builtin'), { recursive: true });
    await writeFile(join(builtin, 'shared', 'test.jsonl'), jsonl([{ id: 'b', input: 'builtin' }]));
    await writeFile(join(builtin, 'only_builtin', 'test.jsonl'), jsonl([{ id: 'o', input: 'x' }]));
    const ws = join(root, 'ws');
    await mkdir(join(ws, 'datasets', 'shared'), { recursive: true });
    await writeFile(join(ws, 'datasets', 'shared', 'test.jsonl'), jsonl([{ id: 'w', input: 'workspace' }]));
    const catalog = new DatasetCatalog({ builtinDir: builtin, workspaceDir: ws });
    expect(catalog.list().map((e) => [e.name, e.source])).toEqual([
      ['only_builtin', 'builtin'],
      ['shared', 'workspace'],
    ]);
    expect((await catalog.load('shared')).splits.test![0]!.input).toBe('workspace');
    expect(() => catalog.entry('nope')).toThrow(/^dataset "nope" not found \(known: only_builtin, shared\)$/);
    expect(() => catalog.entry('../shared')).toThrow(/not found/);
  });
});
