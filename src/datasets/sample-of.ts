/**
 * Turns a raw record into a Sample, checking each field and naming it when it is wrong. Keys
 * that are not sample fields go into `metadata` (the record's own `metadata` wins on a clash).
 */
import { createHash } from 'node:crypto';
import { taskEnvironmentProblem } from './check-task-environment.js';
import { DatasetInvalidError, type DatasetFault } from './dataset-invalid-error.js';
import type { DatasetManifest } from './dataset-manifest.js';
import type { PositionUnit, RawRecord } from './raw-record.js';
import type { ChatMessage, Sample, SampleTarget } from './types.js';

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);
type FieldName = 'id' | 'input' | 'target' | 'choices' | 'metadata' | 'split';

/** Levels of arrays and objects a record may nest (the record is level 1): deeper ones could not be hashed or written without overflowing the stack. */
export const MAX_RECORD_DEPTH = 100;

/** The first top-level field of `record` nesting past MAX_RECORD_DEPTH, counted without recursion. */
function tooDeepField(record: Record<string, unknown>): string | undefined {
  for (const [field, value] of Object.entries(record)) {
    const stack: Array<[unknown, number]> = [[value, 2]];
    while (stack.length > 0) {
      const [x, d] = stack.pop()!;
      if (typeof x !== 'object' || x === null) continue;
      if (d > MAX_RECORD_DEPTH) return field;
      for (const child of Object.values(x)) stack.push([child, d + 1]);
    }
  }
  return undefined;
}

export interface SampleOfOptions {
  file: string;
  unit: PositionUnit;
  fields?: DatasetManifest['fields'];
}

/** The sample and the split its record names (undefined: the file's split). */
export function sampleOf(raw: RawRecord, opts: SampleOfOptions): { sample: Sample; split: string | undefined } {
  const at = (field?: string): DatasetFault => ({ file: opts.file, line: raw.line, unit: opts.unit, ...(field ? { field } : {}) });
  const v = raw.value;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new DatasetInvalidError(at(), 'a record must be a JSON object');
  const record = v as Record<string, unknown>;
  const deep = tooDeepField(record);
  if (deep !== undefined) throw new DatasetInvalidError(at(deep), `nests deeper than ${MAX_RECORD_DEPTH} levels of objects and arrays`);
  const key = (f: FieldName) => opts.fields?.[f] ?? f;
  // Own keys only: a field mapped to "constructor" is missing from a record that lacks it, not Object's function.
  const field = (f: FieldName): unknown => (Object.hasOwn(record, key(f)) ? record[key(f)] : undefined);
  const taken = new Set<string>((['id', 'input', 'target', 'choices', 'metadata', 'split'] as const).map(key));

  const input = inputOf(field('input'), at(key('input')));
  const target = targetOf(field('target'), at(key('target')));
  const choices = choicesOf(field('choices'), at(key('choices')));
  const ownMeta = field('metadata');
  if (ownMeta !== undefined && (typeof ownMeta !== 'object' || ownMeta === null || Array.isArray(ownMeta))) {
    throw new DatasetInvalidError(at(key('metadata')), `must be an object, got ${JSON.stringify(ownMeta)}`);
  }
  // Defined, not assigned: a "__proto__" key (JSON.parse makes it an own key) would otherwise set the prototype and be lost.
  const metadata: Record<string, unknown> = {};
  const keep = (k: string, x: unknown) =>
    Object.defineProperty(metadata, k, { value: x, enumerable: true, writable: true, configurable: true });
  for (const [k, x] of Object.entries(record)) if (!taken.has(k)) keep(k, x);
  for (const [k, x] of Object.entries(ownMeta ?? {})) keep(k, x);
  const cluster = Object.hasOwn(metadata, 'cluster') ? metadata.cluster : undefined;
  if (cluster !== undefined && typeof cluster !== 'string' && typeof cluster !== 'number') {
    throw new DatasetInvalidError(at('metadata.cluster'), `must be a string or a number, got ${JSON.stringify(cluster)}`);
  }
  if (Object.hasOwn(metadata, 'environment')) {
    const problem = taskEnvironmentProblem(metadata.environment);
    const rawId = field('id');
    const named = typeof rawId === 'string' || typeof rawId === 'number' ? ` (sample ${JSON.stringify(String(rawId))})` : '';
    if (problem) throw new DatasetInvalidError(at(problem[0]), `${problem[1]}${named}`);
  }
  const split = field('split');
  if (split !== undefined && (typeof split !== 'string' || split === '')) {
    throw new DatasetInvalidError(at(key('split')), `must be a non-empty string, got ${JSON.stringify(split)}`);
  }

  const content: Omit<Sample, 'id'> = {
    input,
    ...(target !== undefined ? { target } : {}),
    ...(choices !== undefined ? { choices } : {}),
    metadata,
  };
  const rawId = field('id');
  let id: string;
  if (rawId === undefined || rawId === null) id = contentId(content);
  else if ((typeof rawId === 'string' && rawId !== '') || (typeof rawId === 'number' && Number.isFinite(rawId))) id = String(rawId);
  else throw new DatasetInvalidError(at(key('id')), `must be a non-empty string or a number, got ${JSON.stringify(rawId)}`);
  if (id.includes('/'))
    throw new DatasetInvalidError(at(key('id')), `must not contain "/" (it is part of the episode id), got ${JSON.stringify(id)}`);
  return { sample: { id, ...content }, split };
}

/** 16 hex digits of SHA-256 over the canonical JSON of the content (keys sorted): the same record gets the same id everywhere. */
export function contentId(content: Omit<Sample, 'id'>): string {
  return createHash('sha256').update(canonicalJson(content)).digest('hex').slice(0, 16);
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function inputOf(v: unknown, at: DatasetFault): string | ChatMessage[] {
  if (typeof v === 'string') {
    if (v.trim() === '') throw new DatasetInvalidError(at, 'must not be empty');
    return v;
  }
  if (v === undefined) throw new DatasetInvalidError(at, 'is missing (a string or a list of chat messages)');
  if (!Array.isArray(v) || v.length === 0) {
    throw new DatasetInvalidError(at, `must be a string or a non-empty list of chat messages, got ${JSON.stringify(v)}`);
  }
  return v.map((m, i) => {
    const msg = m as Record<string, unknown>;
    if (typeof m !== 'object' || m === null || !ROLES.has(msg.role as string) || typeof msg.content !== 'string') {
      throw new DatasetInvalidError(
        { ...at, field: `${at.field}[${i}]` },
        `must be { role: system|user|assistant|tool, content: string }, got ${JSON.stringify(m)}`,
      );
    }
    return msg as ChatMessage;
  });
}

function targetOf(v: unknown, at: DatasetFault): SampleTarget | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return v as string[];
  throw new DatasetInvalidError(at, `must be a string, a non-empty list of strings or a number, got ${JSON.stringify(v)}`);
}

function choicesOf(v: unknown, at: DatasetFault): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v) && v.length >= 2 && v.length <= 26 && v.every((x) => typeof x === 'string')) return v as string[];
  throw new DatasetInvalidError(at, `must be a list of 2 to 26 strings, got ${JSON.stringify(v)}`);
}
