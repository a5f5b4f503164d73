/**
 * Finds which form field a refused request is about, from the error's extensions or its
 * words, so the message can be shown beside that field.
 */
import type { GraphQLErrorItem } from '../api/client.js';
import type { StartEvalInput } from './runForm.js';

export const START_FIELDS = [
  'graphName',
  'episodeCount',
  'workerCount',
  'seed',
  'stepBudget',
  'priority',
  'exclusiveGpu',
  'marginalVramMb',
  'viaSubprocess',
  'overrides',
  'dataset',
  'split',
  'episodeOffset',
  'repeats',
  'perStepTimeoutSec',
  'perCallTimeoutSec',
  'memoryBudgetMb',
  'name',
  'tags',
  'note',
] as const satisfies ReadonlyArray<keyof StartEvalInput>;
export type StartField = (typeof START_FIELDS)[number];

/** Words a message may use for a field, checked in this order (the most specific first). */
const WORDS: Array<[RegExp, StartField]> = [
  [/overrides?\b/i, 'overrides'],
  [/\bepisode ?offset|\boffset\b/i, 'episodeOffset'],
  [/\brepeats\b/i, 'repeats'],
  [/\bepisode ?count|\bepisodes?\b(?! ?(index|record|id))/i, 'episodeCount'],
  [/\bworker ?count|\bworkers?\b/i, 'workerCount'],
  [/\bstep ?budget|\bbudget\b/i, 'stepBudget'],
  [/\bpriority\b/i, 'priority'],
  [/\bmarginal|\bvram\b/i, 'marginalVramMb'],
  [/\bexclusive/i, 'exclusiveGpu'],
  [/\bsubprocess/i, 'viaSubprocess'],
  [/\bseed\b/i, 'seed'],
  [/\bdataset\b/i, 'dataset'],
  [/\bsplit\b/i, 'split'],
  [/\bgraph\b|\bnode type\b|\bedge\b/i, 'graphName'],
];

const EVERYDAY_WORDS: ReadonlySet<StartField> = new Set(['name', 'tags', 'note']);

const asField = (s: string): StartField | null => {
  const last = s.split('.').pop() ?? s;
  return (START_FIELDS as readonly string[]).includes(last) ? (last as StartField) : null;
};

export function fieldOfError(e: GraphQLErrorItem): StartField | null {
  const ext = e.extensions ?? {};
  for (const k of ['field', 'argumentName', 'argument', 'path']) {
    const v = ext[k];
    const s = Array.isArray(v) ? v.join('.') : typeof v === 'string' ? v : null;
    if (s) {
      const f = asField(s);
      if (f) return f;
    }
  }
  // A required field left out: GraphQL echoes the whole input (every other field's name in it) before naming it.
  const missing = REQUIRED_MISSING.exec(e.message);
  if (missing?.[1]) {
    const f = asField(missing[1]);
    if (f) return f;
  }
  // GraphQL's own coercion errors say `at "input.episodeCount"`; others name `input.x`.
  const named = /\binput\.([A-Za-z]+)/.exec(e.message);
  if (named?.[1]) {
    const f = asField(named[1]);
    if (f) return f;
  }
  // "name", "tags" and "note" are everyday words: only the field named in extensions places those.
  for (const f of START_FIELDS) if (!EVERYDAY_WORDS.has(f) && new RegExp(`\\b${f}\\b`).test(e.message)) return f;
  for (const [re, f] of WORDS) if (re.test(e.message)) return f;
  return null;
}

const REQUIRED_MISSING = /Field "([A-Za-z]+)" of required type "[^"]+" was not provided/;

/** GraphQL's reasons for refusing a variable's value, in a form's words. */
const COERCION_WORDS: Array<[RegExp, (got: string) => string]> = [
  [
    /^Int cannot represent non 32-bit signed integer value: (.*)$/,
    (got) => `must be a whole number from −2147483648 to 2147483647, got ${got}`,
  ],
  [/^Int cannot represent non-integer value: (.*)$/, (got) => `must be a whole number, got ${got}`],
  [/^Float cannot represent non numeric value: (.*)$/, (got) => `must be a number, got ${got}`],
  [/^Boolean cannot represent a non boolean value: (.*)$/, (got) => `must be true or false, got ${got}`],
];

/**
 * The message to show beside a field: GraphQL's refusal of a variable (`Variable "$input" got
 * invalid value … at "input.x"; Int cannot represent …`, which echoes the whole input when a
 * required field is missing) said in a form's words; any other message as the server wrote it.
 */
export function formMessage(message: string, named = false): string {
  const missing = REQUIRED_MISSING.exec(message);
  if (missing) return named ? `${missing[1]}: required` : 'required';
  const m = /^Variable "\$([A-Za-z]+)" got invalid value .*?(?: at "([^"]+)")?; (.*)$/s.exec(message);
  if (!m?.[3]) return message;
  const reason = m[3].replace(/\.$/, '');
  let said = reason;
  for (const [re, say] of COERCION_WORDS) {
    const got = re.exec(reason);
    if (got?.[1] !== undefined) {
      said = say(got[1]);
      break;
    }
  }
  return named ? `${m[2] ?? m[1]}: ${said}` : said;
}

/** Splits a refusal into messages per field and the rest. */
export function splitErrors(errors: GraphQLErrorItem[]): { byField: Partial<Record<StartField, string>>; general: string[] } {
  const byField: Partial<Record<StartField, string>> = {};
  const general: string[] = [];
  for (const e of errors) {
    const code = typeof e.extensions?.code === 'string' ? (e.extensions.code as string) : null;
    // Back-pressure and server faults are about the system, not a field.
    const f = code === 'QUEUE_FULL' || code === 'INTERNAL_SERVER_ERROR' || code === 'NETWORK' ? null : fieldOfError(e);
    const message = formMessage(e.message);
    if (f) byField[f] = byField[f] ? `${byField[f]}; ${message}` : message;
    else general.push(code && code !== 'BAD_USER_INPUT' ? `${e.message} (${code})` : formMessage(e.message, true));
  }
  return { byField, general };
}
