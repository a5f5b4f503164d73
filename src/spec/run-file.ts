/**
 * Run files: what a StartEvalInput holds, written as TOML, YAML or JSON (`evalctl run --config
 * eval.toml`), read with the kept parsers (smol-toml, yaml). The keys are the fields of the
 * run-spec schema (src/spec/run-spec.ts) by their StartEvalInput names, plus an optional
 * `sweep` grid; any other key is refused, naming the key and its line in the file.
 */
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { createRequire } from 'node:module';
import { BadInputError } from '../errors.js';
import { runInputSchema } from './run-spec.js';

/** The key of the optional sweep grid: field (or `overrides.<node>.<key>`) → the values to sweep. */
export const SWEEP_KEY = 'sweep';

/** field or `overrides.<node>.<key>` → the values it takes, one run per combination. */
export type SweepGrid = Record<string, unknown[]>;

/** Run-spec fields that startSweep sets on the runs it queues; a file naming them would pass for a sweep's run. */
const SWEEP_SET_FIELDS: ReadonlySet<string> = new Set(['sweepId', 'sweepPoint']);

/** Keys a run file may hold: every run-spec input field but those startSweep sets, and `sweep`. */
export const runFileKeys = (): string[] => [...Object.keys(runInputSchema.shape).filter((k) => !SWEEP_SET_FIELDS.has(k)), SWEEP_KEY];

/** Command-line names users may write by habit, and the key that means the same. */
const KEY_HINTS: Record<string, string> = {
  graph: 'graphName',
  episodes: 'episodeCount',
  workers: 'workerCount',
  'max-in-flight': 'maxInFlight',
  max_in_flight: 'maxInFlight',
  'step-budget': 'stepBudget',
  step_budget: 'stepBudget',
  'per-step-timeout': 'perStepTimeoutSec',
  'per-call-timeout': 'perCallTimeoutSec',
  'episode-offset': 'episodeOffset',
  set: 'overrides',
};

/** A run file that cannot be used: `file`, and `line` (1-based) when the problem has one. */
export class RunFileError extends BadInputError {
  readonly file: string;
  readonly line: number | undefined;
  readonly key: string | undefined;
  constructor(file: string, line: number | undefined, message: string, key?: string) {
    super(`${file}${line === undefined ? '' : ` line ${line}`}: ${message}`);
    this.file = file;
    this.line = line;
    this.key = key;
  }
}

export interface RunFile {
  path: string;
  /** The run-spec fields the file sets, unchecked (the run-spec schema checks them once they are merged with the flags). */
  fields: Record<string, unknown>;
  /** The sweep grid, when the file has one. */
  sweep: SweepGrid | undefined;
  /** The 1-based line of a top-level key, when found. */
  lineOf(key: string): number | undefined;
}

type Format = 'toml' | 'yaml' | 'json';

function formatOf(path: string): Format {
  const ext = extname(path).toLowerCase();
  if (ext === '.toml') return 'toml';
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  if (ext === '.json') return 'json';
  throw new RunFileError(basename(path), undefined, `a run file is .toml, .yaml, .yml or .json, got "${ext || '(no extension)'}"`);
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Lines of the top-level keys of a TOML text: `key = …` or `key.sub = …` before any table, and `[key]` / `[key.sub]` headers. */
function tomlLines(text: string): (key: string) => number | undefined {
  const lines = text.split(/\r?\n/);
  return (key) => {
    const k = `(?:${escapeRe(key)}|"${escapeRe(key)}"|'${escapeRe(key)}')`;
    const assign = new RegExp(`^\\s*${k}\\s*[=.]`);
    const table = new RegExp(`^\\s*\\[\\[?\\s*${k}\\s*[\\].]`);
    let inTable = false;
    for (const [i, line] of lines.entries()) {
      if (table.test(line)) return i + 1;
      if (/^\s*\[/.test(line)) inTable = true;
      else if (!inTable && assign.test(line)) return i + 1;
    }
    return undefined;
  };
}

/** Lines of the top-level keys of a JSON object text: a key string at depth 1 followed by ':'. */
function jsonLines(text: string): (key: string) => number | undefined {
  const found = new Map<string, number>();
  let depth = 0;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') line++;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (depth === 1 && /^\s*:/.test(text.slice(i + 1, i + 64))) {
        try {
          const key = JSON.parse(text.slice(start, i + 1)) as string;
          if (!found.has(key)) found.set(key, line);
        } catch {
          // not a key JSON.parse accepted; the parse above already refused the file
        }
      }
    }
  }
  return (key) => found.get(key);
}

// Loaded on the first YAML file: the parser is some seventy modules every `evalctl run` would otherwise read at start.
let yamlParser: typeof import('yaml') | undefined;
const yaml = (): typeof import('yaml') => (yamlParser ??= createRequire(import.meta.url)('yaml') as typeof import('yaml'));

/** Alias expansions a YAML run file may make (the yaml library's default, named here): past it, a few lines of aliases could expand to gigabytes. */
export const MAX_YAML_ALIAS_COUNT = 100;

type YamlDocument = ReturnType<typeof import('yaml').parseDocument>;
type YamlLineCounter = InstanceType<typeof import('yaml').LineCounter>;

/** The document's value, or RUN_FILE error naming the line of the smallest part that fails alone (the alias bomb's start). */
function yamlData(doc: YamlDocument, lineCounter: YamlLineCounter, file: string): unknown {
  // An alias inside the node it names was refused by parseText's pass over the aliases.
  const opts = { maxAliasCount: MAX_YAML_ALIAS_COUNT };
  try {
    return doc.toJS(opts);
  } catch (err) {
    const { isMap, isNode, isSeq } = yaml();
    const failsAlone = (node: unknown): boolean => {
      if (!isNode(node)) return false;
      try {
        node.toJS(doc, opts);
        return false;
      } catch {
        return true;
      }
    };
    let culprit: unknown = doc.contents;
    for (;;) {
      const children: unknown[] = isMap(culprit) ? culprit.items.flatMap((p) => [p.key, p.value]) : isSeq(culprit) ? culprit.items : [];
      const next = children.find(failsAlone);
      if (next === undefined) break;
      culprit = next;
    }
    const start = isNode(culprit) ? culprit.range?.[0] : undefined;
    const line = start === undefined ? undefined : lineCounter.linePos(start).line;
    const message = (err as Error).message;
    throw new RunFileError(
      file,
      line,
      /alias count/i.test(message)
        ? `YAML aliases (*name) expand past the limit of ${MAX_YAML_ALIAS_COUNT} alias expansions, which guards against alias bombs (a few lines that expand to gigabytes)`
        : `cannot be read as YAML: ${message}`,
    );
  }
}

function parseText(text: string, format: Format, file: string): { data: unknown; lineOf: (key: string) => number | undefined } {
  if (format === 'toml') {
    try {
      return { data: parseToml(text), lineOf: tomlLines(text) };
    } catch (err) {
      if (err instanceof TomlError) throw new RunFileError(file, err.line, `not valid TOML: ${err.message.split('\n')[0]}`);
      throw err;
    }
  }
  if (format === 'yaml') {
    const { isMap, isScalar, LineCounter, parseDocument, visit } = yaml();
    const lineCounter = new LineCounter();
    const doc = parseDocument(text, { lineCounter, prettyErrors: false });
    const first = doc.errors[0];
    if (first) throw new RunFileError(file, lineCounter.linePos(first.pos[0]).line, `not valid YAML: ${first.message.split('\n')[0]}`);
    visit(doc, {
      Alias(_, alias, path) {
        const target = alias.resolve(doc);
        const at = alias.range ? lineCounter.linePos(alias.range[0]).line : undefined;
        if (!target) throw new RunFileError(file, at, `the alias *${alias.source} names no anchor &${alias.source} set before it`);
        // An alias inside the node it names makes a value that contains itself: no run field can hold it, and printing it throws.
        if (path.includes(target))
          throw new RunFileError(file, at, `the alias *${alias.source} is inside the value it names (a value that contains itself)`);
      },
    });
    const lines = new Map<string, number>();
    if (isMap(doc.contents)) {
      for (const pair of doc.contents.items) {
        if (isScalar(pair.key) && pair.key.range) lines.set(String(pair.key.value), lineCounter.linePos(pair.key.range[0]).line);
      }
    }
    return { data: yamlData(doc, lineCounter, file), lineOf: (key) => lines.get(key) };
  }
  try {
    return { data: JSON.parse(text), lineOf: jsonLines(text) };
  } catch (err) {
    const m = /line (\d+)/.exec((err as Error).message);
    throw new RunFileError(file, m ? Number(m[1]) : undefined, `not valid JSON: ${(err as Error).message}`);
  }
}

function checkSweep(raw: unknown, file: string, line: number | undefined): SweepGrid {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new RunFileError(file, line, `"${SWEEP_KEY}" must be a table of field → list of values, e.g. seed = [1, 2, 3]`, SWEEP_KEY);
  const grid: SweepGrid = {};
  for (const [k, v] of Object.entries(raw)) {
    if (!Array.isArray(v) || v.length === 0)
      throw new RunFileError(
        file,
        line,
        `"${SWEEP_KEY}.${k}" must be a non-empty list of values, got ${JSON.stringify(v)}`,
        `${SWEEP_KEY}.${k}`,
      );
    // Defined, not assigned: an axis named "__proto__" would otherwise replace the grid's prototype and vanish.
    Object.defineProperty(grid, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return grid;
}

/** Parses a run file's text (`name` is used for the format and in errors). */
export function parseRunFile(text: string, path: string): RunFile {
  const file = basename(path);
  const { data, lineOf } = parseText(text, formatOf(path), file);
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new RunFileError(file, undefined, 'a run file holds a table of run fields (graphName, episodeCount, …)');
  const allowed = new Set(runFileKeys());
  for (const key of Object.keys(data)) {
    if (allowed.has(key)) continue;
    // Own keys only: "constructor" or "__proto__" would otherwise find Object.prototype's.
    const hint = Object.hasOwn(KEY_HINTS, key) ? ` (did you mean "${KEY_HINTS[key]}"?)` : '';
    throw new RunFileError(file, lineOf(key), `unknown key "${key}"${hint}; the keys are ${[...allowed].join(', ')}`, key);
  }
  const { [SWEEP_KEY]: sweepRaw, ...fields } = data as Record<string, unknown>;
  const sweep = sweepRaw === undefined ? undefined : checkSweep(sweepRaw, file, lineOf(SWEEP_KEY));
  return { path, fields, sweep, lineOf };
}

/** Reads and parses a run file: BAD_USER_INPUT naming the file (and line) when it cannot be used. */
export function readRunFile(path: string): RunFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new RunFileError(path, undefined, `cannot read the run file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseRunFile(text, path);
}

/** How an error calls each field the file set: `workerCount (eval.toml line 4)`. */
export function runFileLabels(rf: RunFile): Record<string, string> {
  const out: Record<string, string> = {};
  const file = basename(rf.path);
  for (const key of Object.keys(rf.fields)) {
    const line = rf.lineOf(key);
    out[key] = `${key} (${file}${line === undefined ? '' : ` line ${line}`})`;
  }
  return out;
}
