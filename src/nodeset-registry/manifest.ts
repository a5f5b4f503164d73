/**
 * Nodeset manifests: the zod schema of `NodesetManifest` and `loadManifest(dir)`, which reads
 * `<dir>/manifest.json` and names the file and the field of anything wrong.
 */
import { z } from '../core/zod.js';
import { BadInputError } from '../errors.js';
import { readManifestJson } from './read-manifest.js';
import type { NodesetManifest } from '../core/types.js';

export { MANIFEST_FILE } from './read-manifest.js';

/** Nodeset names: no `__` (the separator of node types) and no `#` (the separator of host tags). */
const NODESET_NAME = /^[A-Za-z][A-Za-z0-9-]*(?:_[A-Za-z0-9-]+)*$/;
const FUNCTION_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** A metric's declared range (PortSpec.metrics); also how a run spec freezes them. */
export const metricRangeSchema = z
  .strictObject({
    min: z.number().optional(),
    max: z.number().optional(),
    missing: z
      .union([z.number().refine(Number.isFinite, { error: 'must be a finite number' }), z.literal('exclude')], {
        error: 'must be a number (what a play that never produced the metric scores) or "exclude"',
      })
      .optional(),
    goal: z.enum(['max', 'min'], { error: 'must be "max" (higher is better) or "min" (lower is better)' }).optional(),
    primary: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .refine((r) => r.min === undefined || r.max === undefined || r.min <= r.max, { error: 'min must be at most max' })
  .refine(
    (r) => typeof r.missing !== 'number' || ((r.min === undefined || r.missing >= r.min) && (r.max === undefined || r.missing <= r.max)),
    {
      error: 'missing must lie within min and max',
      path: ['missing'],
    },
  );

/** Metric name → range: a port's `metrics`, a run spec's and a summary's `metricRanges`. */
export const metricRangesSchema = z.record(z.string().min(1), metricRangeSchema);

const portSchema = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  optional: z.boolean().optional(),
  metrics: metricRangesSchema.optional(),
});

const functionSchema = z.looseObject({
  name: z.string().regex(FUNCTION_NAME, 'a function name is a letter followed by letters, digits or "_"'),
  description: z.string().optional(),
  inputs: z.array(portSchema),
  outputs: z.array(portSchema),
  batched: z.boolean().optional(),
  config: z
    .record(
      z.string(),
      z.looseObject({
        default: z.unknown().optional(),
        description: z.string().optional(),
        type: z.enum(['number', 'integer', 'boolean', 'string', 'array', 'object']).optional(),
        minimum: z.number().optional(),
        maximum: z.number().optional(),
        enum: z
          .array(z.union([z.string(), z.number(), z.boolean()]))
          .min(1)
          .optional(),
        operatorOnly: z.boolean().optional(),
        knownEndpoint: z.boolean().optional(),
        env: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
          .optional(),
      }),
    )
    .optional(),
  model: z
    .strictObject({
      name: z.string().min(1),
      endpoint: z.string().min(1),
      sampling: z.array(z.string().min(1)),
    })
    .optional(),
});

const panelSchema = z.looseObject({
  fields: z
    .array(
      z.looseObject({
        name: z.string().min(1),
        label: z.string().optional(),
        dependsOn: z.array(z.string()).optional(),
        default: z.union([z.string(), z.number()]).optional(),
      }),
    )
    .min(1),
  actions: z.array(z.string().min(1)),
});

const positiveInt = z.number().int().positive();

export const manifestSchema = z
  .looseObject({
    name: z.string().regex(NODESET_NAME, 'a nodeset name is letters, digits, "-" and single "_" (no "__", no "#")'),
    version: z.string().optional(),
    description: z.string().optional(),
    parallelism: z.enum(['shared', 'replicated']),
    functions: z.array(functionSchema).min(1),
    panel: panelSchema.optional(),
    resources: z
      .looseObject({
        ramMb: z.number().nonnegative().optional(),
        vramMb: z.number().nonnegative().optional(),
        episodeRamMb: z.number().nonnegative().optional(),
        cores: z.number().nonnegative().optional(),
      })
      .optional(),
    batching: z
      .looseObject({
        maxBatchSize: positiveInt.optional(),
        maxQueueDelayMs: z.number().nonnegative().optional(),
      })
      .optional(),
    module: z.string().min(1).optional(),
    command: z.array(z.string().min(1)).min(1).optional(),
    inProcess: z.union([z.boolean(), z.literal('thread')]).optional(),
    modelKeys: z.boolean().optional(),
    inlineUnless: z.array(z.string().min(1)).optional(),
    heavyWith: z.array(z.string().min(1)).optional(),
    preflight: z.string().min(1).optional(),
  })
  .superRefine((m, ctx) => {
    if ((m.module === undefined) === (m.command === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [m.module === undefined ? 'module' : 'command'],
        message: 'exactly one of "module" (a JS module of handlers) or "command" (a host in any language) is required',
      });
    }
    for (const field of ['inlineUnless', 'heavyWith'] as const) {
      const keys = m[field];
      if (!keys) continue;
      if (m.module === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: 'only a JS-module nodeset ("module") can be served on the eval process\'s thread',
        });
      }
      const configKeys = new Set(m.functions.flatMap((fn) => Object.keys(fn.config ?? {})));
      keys.forEach((key, i) => {
        if (!configKeys.has(key)) {
          ctx.addIssue({
            code: 'custom',
            path: [field, i],
            message: `"${key}" is not a config key of any function (declared: ${[...configKeys].join(', ') || 'none'})`,
          });
        }
      });
    }
    const seen = new Set<string>();
    m.functions.forEach((fn, i) => {
      if (seen.has(fn.name)) ctx.addIssue({ code: 'custom', path: ['functions', i, 'name'], message: `duplicate function "${fn.name}"` });
      seen.add(fn.name);
      if (fn.model) {
        const { name, endpoint, sampling } = fn.model;
        [name, endpoint, ...sampling].forEach((key, j) => {
          if (!fn.config?.[key]) {
            const path = j === 0 ? ['name'] : j === 1 ? ['endpoint'] : ['sampling', j - 2];
            ctx.addIssue({
              code: 'custom',
              path: ['functions', i, 'model', ...path],
              message: `"${key}" is not a config key of "${fn.name}"`,
            });
          }
        });
      }
      for (const dir of ['inputs', 'outputs'] as const) {
        const ports = new Set<string>();
        fn[dir].forEach((p, j) => {
          if (ports.has(p.name))
            ctx.addIssue({ code: 'custom', path: ['functions', i, dir, j, 'name'], message: `duplicate port "${p.name}"` });
          ports.add(p.name);
        });
      }
    });
    if (m.panel) {
      const names = m.panel.fields.map((f) => f.name);
      m.panel.fields.forEach((f, i) => {
        f.dependsOn?.forEach((dep, j) => {
          // A field may only depend on fields before it, so the cascade has an order and no cycle.
          if (!names.slice(0, i).includes(dep)) {
            ctx.addIssue({
              code: 'custom',
              path: ['panel', 'fields', i, 'dependsOn', j],
              message: `"${dep}" is not a field declared before "${f.name}" (declared: ${names.join(', ')})`,
            });
          }
        });
      });
    }
  });

function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out ? `.${String(key)}` : String(key);
  return out || '(root)';
}

/** Validates a parsed manifest; `source` names where it came from in the error. */
export function parseManifest(raw: unknown, source: string): NodesetManifest {
  const result = manifestSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`);
    throw new BadInputError(`invalid nodeset manifest ${source}: ${problems.join('; ')}`);
  }
  return result.data as NodesetManifest;
}

/** Reads and validates `<dir>/manifest.json`. */
export async function loadManifest(dir: string): Promise<NodesetManifest> {
  const { file, raw } = await readManifestJson(dir);
  return parseManifest(raw, file);
}
