/**
 * The part of zod this project uses, by name, so the build's bundle of it (src/core/zod.ts)
 * leaves the rest out: zod's own namespace reaches its ~60 locales and its JSON Schema tools,
 * 450 KB against 98 KB, 20–30 against 8–15 ms to load in each process and thread. A schema
 * function used for the first time is added here.
 */
import { config } from 'zod';

export {
  array,
  boolean,
  enum,
  int,
  iso,
  literal,
  looseObject,
  null,
  number,
  object,
  partialRecord,
  record,
  strictObject,
  string,
  union,
  unknown,
  ZodError,
} from 'zod';
export type { infer, input, output, RefinementCtx, ZodType } from 'zod';

// Without generating code per schema: most schemas here parse a few times per process (manifests,
// a spec, a summary), where compiling cost more than it saved (12.8 → 7.6 ms for the built-in
// manifests, the same time for 50 parses of a 200-episode summary).
config({ jitless: true });
