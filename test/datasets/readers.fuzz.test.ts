/**
 * Generated dataset files (JSONL, JSON, CSV, Parquet bytes, dataset.json) and records: each
 * folder loads, or is refused with DATASET_INVALID naming the file (and the line when a record is at fault).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/datasets/index.js';
import { loadDataset } from '../../src/datasets/index.js';
import { readCsv } from '../../src/datasets/read-csv.js';
import { readJsonArray } from '../../src/datasets/read-json-array.js';
import type { RawRecord } from '../../src/datasets/raw-record.js';
import { streamJsonl } from '../../src/datasets/read-records.js';
import { readParquet } from '../../src/datasets/read-parquet.js';
import { MAX_RECORD_DEPTH, sampleOf } from '../../src/datasets/sample-of.js';
import { writeParquet } from '../fixtures/write-parquet.js';
import {
  attempt,
  attemptAsync,
  expectCoded,
  fuzzParams,
  fuzzParamsAsync,
  nastyKey,
  nastyString,
  nastyValue,
  nested,
  PROTO_KEYS,
  reportFuzz,
  withOwnKey,
} from '../support/fuzz.js';

const startedAt = Date.now();
let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'datasets-fuzz-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  reportFuzz('dataset readers', startedAt);
});

const FILE = '/data/qa/test.jsonl';

/** Sample-like records: the sample fields with values of their kind or not, stray and prototype keys. */
const record: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(
        fc.record(
          {
            id: fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), nastyValue),
            input: fc.oneof(
              fc.string({ minLength: 1 }),
              fc.array(fc.record({ role: fc.constantFrom('user', 'system', 'assistant', 'tool', 'x'), content: fc.string() }), {
                maxLength: 3,
              }),
              nastyValue,
            ),
            target: fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 }), fc.double(), nastyValue),
            choices: fc.oneof(fc.array(fc.string(), { minLength: 2, maxLength: 4 }), nastyValue),
            metadata: fc.oneof(fc.dictionary(nastyKey, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), nastyValue),
            split: fc.oneof(fc.constantFrom('test', 'train', ...PROTO_KEYS), nastyString),
          },
          { requiredKeys: [] },
        ),
        fc.option(fc.tuple(nastyKey, nastyValue), { freq: 3 }),
      )
      .map(([r, extra]) => (extra ? withOwnKey(r, extra[0], extra[1]) : r)),
  },
  { weight: 1, arbitrary: nastyValue },
);

describe('dataset records under generated input', () => {
  it('sampleOf makes a sample or refuses naming the file, line and field', () => {
    fc.assert(
      fc.property(record, fc.nat({ max: 1_000_000 }), (value, line) => {
        const r = attempt(() => sampleOf({ value, line: line + 1 }, { file: FILE, unit: 'line' }));
        if (!r.ok) {
          expectCoded(r.error, ['DATASET_INVALID'], `${FILE}:${line + 1}:`);
          return;
        }
        const { sample } = r.value;
        expect(sample.id.length).toBeGreaterThan(0);
        expect(sample.id).not.toContain('/');
        // Every key of the record that is not a sample field is kept in metadata, prototype keys included.
        const rec = value as Record<string, unknown>;
        for (const k of Object.keys(rec)) {
          if (!['id', 'input', 'target', 'choices', 'metadata', 'split'].includes(k)) expect(Object.hasOwn(sample.metadata, k)).toBe(true);
        }
        JSON.stringify(sample);
      }),
      fuzzParams(1000),
    );
  });

  it('records nested deeper than the limit are refused naming the field, never a stack overflow', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 1, max: MAX_RECORD_DEPTH + 5 }), fc.integer({ min: 1, max: 200_000 })),
        fc.constantFrom('metadata', 'input', 'target', 'extra'),
        (depth, field) => {
          const value = { input: 'q', [field]: nested(depth, 'x', 'array') };
          const r = attempt(() => sampleOf({ value, line: 3 }, { file: FILE, unit: 'line' }));
          if (depth + 1 > MAX_RECORD_DEPTH) {
            expect(r.ok).toBe(false);
            if (!r.ok)
              expectCoded(r.error, ['DATASET_INVALID'], `${FILE}:3: field "${field}": nests deeper than ${MAX_RECORD_DEPTH} levels`);
          } else if (!r.ok) expectCoded(r.error, ['DATASET_INVALID'], `${FILE}:3:`);
        },
      ),
      fuzzParams(60),
    );
  });
});

/** Fragments of JSON, JSONL and CSV text: most texts are nearly valid. */
const textFragment = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom(
      '{"input": "q", "target": "a"}\n',
      '{"input": "q", "split": "constructor"}\n',
      '{"input": "q", "__proto__": {"cluster": []}}\n',
      '{"id": "a/b", "input": "q"}\n',
      '[{"input": "q"}, {"input": "r"}]',
      'input,target,choices,metadata\n',
      'q,a,A|B,{"k":1}\n',
      '"[1, 2] sum?",3,"[""x"",""y""]",\n',
      '__proto__,input\n',
      'input,input\n',
      '"unclosed,\n',
      '\uFEFF',
      '\r\n',
      '\n',
      ',',
      '"',
      '[',
      ']',
      '{',
      '}',
      '\u0000',
      '1e400',
      'NaN',
    ),
  },
  { weight: 4, arbitrary: nastyString },
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => `${JSON.stringify(v)}\n`) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 20_000 }).map((d) => `{"input": "q", "metadata": {"x": ${'['.repeat(d)}${']'.repeat(d)}}}\n`),
  },
);
const datasetText = fc.array(textFragment, { maxLength: 8 }).map((p) => p.join(''));

/** A reader's answer: records each with a line, whose samples come out or are refused naming file and line; or a refusal naming the file. */
function expectRecordsOrRefusal(r: { ok: true; value: RawRecord[] } | { ok: false; error: unknown }, file: string): void {
  if (!r.ok) {
    expectCoded(r.error, ['DATASET_INVALID'], file);
    return;
  }
  for (const rec of r.value) {
    expect(Number.isSafeInteger(rec.line) && rec.line >= 1).toBe(true);
    const s = attempt(() => sampleOf(rec, { file, unit: 'line' }));
    if (!s.ok) expectCoded(s.error, ['DATASET_INVALID'], `${file}:${rec.line}:`);
  }
}

describe('dataset text readers under generated input', () => {
  it.each([
    ['JSON', readJsonArray, '/d/train.json'],
    ['CSV', readCsv, '/d/train.csv'],
  ] as const)('%s: any text gives records or a refusal naming the file', (_, read, file) => {
    fc.assert(
      fc.property(datasetText, (text) => {
        const r = attempt(() => read(file, text));
        expectRecordsOrRefusal(r, file);
      }),
      fuzzParams(350),
    );
  });

  it('JSONL (streamed from its file): any text gives records or a refusal naming the file', async () => {
    const file = join(root, 'train.jsonl');
    await fc.assert(
      fc.asyncProperty(datasetText, async (text) => {
        await writeFile(file, text);
        const r = await attemptAsync(async () => {
          const out: RawRecord[] = [];
          for await (const rec of streamJsonl(file)) out.push(rec);
          return out;
        });
        expectRecordsOrRefusal(r, file);
      }),
      fuzzParamsAsync(120),
    );
  });
});

let folders = 0;
async function loadFolder(files: Record<string, string | Buffer>): Promise<{ ok: true; value: Dataset } | { ok: false; error: unknown }> {
  const dir = join(root, `d${folders++}`);
  await mkdir(dir);
  for (const [name, body] of Object.entries(files)) await writeFile(join(dir, name), body);
  try {
    return await attemptAsync(() => loadDataset(dir, 'fuzz', 'workspace'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('dataset folders under generated input', () => {
  const fileName = fc.oneof(
    fc.constantFrom('test', 'train', ...PROTO_KEYS).map((n) => n),
    fc.stringMatching(/^[a-z_]{1,8}$/),
  );
  const manifest = fc.oneof(
    fc.constant(undefined),
    fc
      .record(
        {
          description: nastyValue,
          labels: fc.oneof(fc.constant(true), fc.array(nastyString, { maxLength: 3 }), nastyValue),
          defaultSplit: fc.oneof(fc.constantFrom('test', 'train', ...PROTO_KEYS), nastyString),
          fields: fc.oneof(
            fc.dictionary(fc.constantFrom('id', 'input', 'target', 'split', 'x'), fc.constantFrom('q', 'a', ...PROTO_KEYS)),
            nastyValue,
          ),
        },
        { requiredKeys: [] },
      )
      .map((m) => JSON.stringify(m)),
    nastyString,
  );

  it('a folder of generated files loads with every split its own, or is refused naming a file', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fileName, fc.constantFrom('.jsonl', '.json', '.csv'), datasetText), { minLength: 1, maxLength: 3 }),
        manifest,
        async (files, m) => {
          const contents: Record<string, string> = {};
          for (const [name, ext, text] of files) contents[`${name}${ext}`] = text;
          if (m !== undefined) contents['dataset.json'] = m;
          const r = await loadFolder(contents);
          if (!r.ok) {
            expectCoded(r.error, ['DATASET_INVALID'], root);
            return;
          }
          const d = r.value;
          expect(d.splitNames.length).toBeGreaterThan(0);
          expect(d.splitNames).toContain(d.defaultSplit);
          for (const s of d.splitNames) {
            expect(Object.hasOwn(d.splits, s)).toBe(true);
            expect(Array.isArray(d.splits[s])).toBe(true);
          }
          // A split name nobody wrote finds nothing, however it is spelt.
          for (const k of PROTO_KEYS) if (!d.splitNames.includes(k)) expect(d.splits[k]).toBeUndefined();
        },
      ),
      fuzzParamsAsync(100),
    );
  });

  it.each([
    [{ 'constructor.jsonl': '{"input": "q"}\n' }, 'constructor'],
    [{ 'a.jsonl': '{"input": "q", "split": "__proto__"}\n' }, '__proto__'],
    [{ 'a.jsonl': '{"input": "q", "split": "toString"}\n' }, 'toString'],
  ])('a split named like an inherited property is an ordinary split: %j', async (files, split) => {
    const r = await loadFolder(files);
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.value.splitNames).toEqual([split]);
      expect(r.value.splits[split]).toHaveLength(1);
    }
  });

  it('a default split named like an inherited property must exist', async () => {
    const r = await loadFolder({ 'a.jsonl': '{"input": "q"}\n', 'dataset.json': '{"defaultSplit": "constructor"}' });
    expect(r.ok).toBe(false);
    if (!r.ok) expectCoded(r.error, ['DATASET_INVALID'], 'split "constructor" has no samples');
  });

  it('Parquet: a real file with bytes changed or cut reads or is refused naming the file', async () => {
    const good = join(root, 'good.parquet');
    writeParquet(good, [
      { name: 'input', type: 'string', values: ['what is 2+2?', 'capital of France?', '{"x": 1}'] },
      { name: 'target', type: 'int64', values: [4, 0, 7] },
      { name: 'metadata', type: 'string', values: ['{"cluster": "a"}', '{', '{"deep": 1}'] },
    ]);
    const bytes = await readFile(good);
    const edit = fc.oneof(
      fc
        .array(fc.tuple(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 })
        .map((flips) => {
          const b = Buffer.from(bytes);
          for (const [at, v] of flips) b[at] = v;
          return b;
        }),
      fc.nat({ max: bytes.length }).map((n) => bytes.subarray(0, n)),
      fc.uint8Array({ maxLength: 64 }).map((u) => Buffer.concat([Buffer.from('PAR1'), Buffer.from(u), Buffer.from('PAR1')])),
    );
    const file = join(root, 'fuzz.parquet');
    await fc.assert(
      fc.asyncProperty(edit, async (b) => {
        await writeFile(file, b);
        const r = await attemptAsync(() => readParquet(file));
        if (!r.ok) {
          expectCoded(r.error, ['DATASET_INVALID'], file);
          return;
        }
        for (const rec of r.value) {
          const s = attempt(() => sampleOf(rec, { file, unit: 'row' }));
          if (!s.ok) expectCoded(s.error, ['DATASET_INVALID'], `${file} row ${rec.line}`);
        }
      }),
      fuzzParamsAsync(200),
    );
  });

  it('Parquet: a column chunk naming a column the schema lacks is refused, with no read left failing unobserved', async () => {
    const good = join(root, 'renamed.parquet');
    writeParquet(good, [
      { name: 'input', type: 'string', values: ['q'] },
      { name: 'metadata', type: 'string', values: ['{}'] },
    ]);
    const bytes = await readFile(good);
    // The footer names each column twice: in the schema, then in its chunk's path. Misspell the second.
    const at = bytes.lastIndexOf('metadata');
    bytes[at + 2] = 'x'.charCodeAt(0);
    await writeFile(good, bytes);
    const r = await attemptAsync(() => readParquet(good));
    expect(r.ok).toBe(false);
    if (!r.ok) expectCoded(r.error, ['DATASET_INVALID'], 'which the schema does not have');
    // An unhandled rejection from the other column's read would land here and fail the file.
    await new Promise((resolve) => setTimeout(resolve, 20));
  });
});

describe('dataset keys that objects inherit', () => {
  it('a record key "__proto__" is kept in metadata, not made its prototype', () => {
    const { sample } = sampleOf(
      { value: JSON.parse('{"input": "q", "__proto__": {"cluster": [1]}}'), line: 1 },
      { file: FILE, unit: 'line' },
    );
    expect(Object.getPrototypeOf(sample.metadata)).toBe(Object.prototype);
    expect(JSON.stringify(sample.metadata)).toBe('{"__proto__":{"cluster":[1]}}');
    const own = sampleOf(
      { value: JSON.parse('{"input": "q", "metadata": {"__proto__": {"a": 1}}}'), line: 1 },
      { file: FILE, unit: 'line' },
    );
    expect(JSON.stringify(own.sample.metadata)).toBe('{"__proto__":{"a":1}}');
  });

  it('a field mapped to an inherited name is missing from a record that lacks it', () => {
    const r = attempt(() =>
      sampleOf({ value: { question: 'q' }, line: 4 }, { file: FILE, unit: 'line', fields: { input: 'constructor' } }),
    );
    expect(r.ok).toBe(false);
    if (!r.ok) expectCoded(r.error, ['DATASET_INVALID'], `${FILE}:4: field "constructor": is missing`);
  });

  it('a CSV column named "__proto__" is refused on the header line (its cells were dropped)', () => {
    const r = attempt(() => readCsv('/d/t.csv', '__proto__,input\nx,y\n'));
    expect(r.ok).toBe(false);
    if (!r.ok) expectCoded(r.error, ['DATASET_INVALID'], '/d/t.csv:1: the header names a column "__proto__"');
  });
});
