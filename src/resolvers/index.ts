/**
 * The GraphQL schema: every domain registers itself on the one builder; `buildSchema()` builds it once.
 */
import type { GraphQLSchema } from 'graphql';
import { builder } from './builder.js';
import './run.js';
import './run-labels.js';
import './concurrency.js';
import './episode.js';
import './queue.js';
import './graph.js';
import './nodeset.js';
import './resources.js';
import './play.js';
import './dataset.js';
import './report.js';
import './compare.js';
import './gate.js';
import './stop-when.js';
import './sweep.js';
import './manifest.js';
import './audit.js';
import './retry.js';
import './scaleout.js';
import './endpoint.js';

let schema: GraphQLSchema | undefined;

export function buildSchema(): GraphQLSchema {
  schema ??= builder.toSchema();
  return schema;
}

export type { ApiContext } from './context.js';
