/** The committed SDL is what the builder prints, and it carries every name of the contract. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isObjectType, isInputObjectType, isEnumType } from 'graphql';
import { printedSchema, SCHEMA_FILE } from '../../scripts/print-schema.js';
import { buildSchema } from '../../src/resolvers/index.js';
import { EPISODE_STATUSES, RUN_STATUSES } from '../../src/statuses.js';

describe('schema/schema.graphql', () => {
  it('is not stale (run `npm run schema:print` after changing the schema)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(printedSchema());
  });

  it('has every name of the API contract, with a description on every type and field', () => {
    const schema = buildSchema();
    const fields = (type: string) => {
      const t = schema.getType(type);
      if (!isObjectType(t) && !isInputObjectType(t)) throw new Error(`${type} is not an object type`);
      return Object.keys(t.getFields());
    };
    expect(fields('Query')).toEqual(
      expect.arrayContaining(['graphs', 'graph', 'nodesets', 'queue', 'activeJobs', 'runs', 'run', 'resources']),
    );
    expect(fields('Mutation')).toEqual(expect.arrayContaining(['startEval', 'cancelRun']));
    expect(fields('Subscription')).toEqual(expect.arrayContaining(['runProgress', 'episodeCompleted', 'queueChanged', 'playEpisode']));
    expect(fields('StartEvalInput')).toEqual(
      expect.arrayContaining([
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
        'memoryBudgetMb',
        'perStepTimeoutSec',
      ]),
    );
    expect(fields('StartEvalPayload')).toEqual(expect.arrayContaining(['runId', 'status', 'viaSubprocess']));
    expect(fields('Run')).toEqual(
      expect.arrayContaining([
        'id',
        'status',
        'graphName',
        'episodeCount',
        'workerCount',
        'episodesDone',
        'priority',
        'createdAt',
        'startedAt',
        'finishedAt',
        'error',
        'aggregateMetrics',
        'aggregateByTask',
        'statusCounts',
        'episodes',
        'episode',
        'seed',
        'timedOut',
        'retiredWorkers',
        'viaSubprocess',
        'pid',
      ]),
    );
    expect(fields('MetricAggregate')).toEqual(expect.arrayContaining(['name', 'mean', 'count', 'stderr', 'min', 'max']));
    expect(fields('Episode')).toEqual(
      expect.arrayContaining([
        'index',
        'episodeId',
        'status',
        'steps',
        'metrics',
        'droppedMetrics',
        'seed',
        'workerId',
        'durationMs',
        'task',
        'scene',
        'instruction',
        'error',
        'assets',
        'startedAt',
        'finishedAt',
        'stepBudget',
        'nodeErrors',
        'log',
      ]),
    );
    expect(fields('Asset')).toEqual(expect.arrayContaining(['name', 'mime', 'bytes', 'url']));
    const runStatus = schema.getType('RunStatus');
    const episodeStatus = schema.getType('EpisodeStatus');
    if (!isEnumType(runStatus) || !isEnumType(episodeStatus)) throw new Error('status enums missing');
    expect(
      runStatus
        .getValues()
        .map((v) => v.name)
        .sort(),
    ).toEqual([...RUN_STATUSES].sort());
    expect(
      episodeStatus
        .getValues()
        .map((v) => v.name)
        .sort(),
    ).toEqual([...EPISODE_STATUSES].sort());

    const undocumented: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__') || ['String', 'Int', 'Float', 'Boolean', 'ID'].includes(type.name)) continue;
      if (!type.description) undocumented.push(type.name);
      if (isObjectType(type) || isInputObjectType(type)) {
        for (const f of Object.values(type.getFields())) if (!f.description) undocumented.push(`${type.name}.${f.name}`);
      }
    }
    expect(undocumented).toEqual([]);
  });
});
