/** What a client sees of each kind of error. */
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { BadInputError, ConflictError, GraphValidationError, HostError, NotFoundError, QueueFullError } from '../../src/errors.js';
import { createMaskError } from '../../src/resolvers/errors.js';

const fromResolver = (original: Error) => new GraphQLError(original.message, { path: ['run'], originalError: original });

describe('createMaskError', () => {
  it('keeps our public errors with their code, and GRAPH_INVALID as BAD_USER_INPUT listing the problems', () => {
    const unexpected: unknown[] = [];
    const mask = createMaskError((e) => unexpected.push(e));
    const cases: Array<[Error, string]> = [
      [new BadInputError('episodeCount must be ≥ 1, got 0'), 'BAD_USER_INPUT'],
      [new NotFoundError('run "20990101_000000"'), 'NOT_FOUND'],
      [new ConflictError('run 20260101_000000 has already finished'), 'CONFLICT'],
      [new QueueFullError(5), 'QUEUE_FULL'],
    ];
    for (const [err, code] of cases) {
      const masked = mask(fromResolver(err), 'Unexpected error.') as GraphQLError;
      expect(masked.extensions.code).toBe(code);
      expect(masked.message).toBe(err.message);
      expect(masked.path).toEqual(['run']);
    }
    const graph = mask(
      fromResolver(new GraphValidationError('g', ['node "x": unknown type "nope__act"'])),
      'Unexpected error.',
    ) as GraphQLError;
    expect(graph.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'GRAPH_INVALID',
      problems: ['node "x": unknown type "nope__act"'],
    });
    const wrapped = new BadInputError('graphName "g": graph "g" is invalid', { cause: new GraphValidationError('g', ['a', 'b']) });
    expect((mask(fromResolver(wrapped), '') as GraphQLError).extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'GRAPH_INVALID',
      problems: ['a', 'b'],
    });
    expect((mask(fromResolver(new QueueFullError(5)), '') as GraphQLError).extensions.capacity).toBe(5);
    expect(unexpected).toEqual([]);
  });

  it('masks anything else as INTERNAL_SERVER_ERROR and reports the original', () => {
    const unexpected: unknown[] = [];
    const mask = createMaskError((e) => unexpected.push(e));
    const secret = new Error('ENOENT: /home/user/secret/path');
    const masked = mask(fromResolver(secret), 'Unexpected error.') as GraphQLError;
    expect(masked.message).toBe('Unexpected error.');
    expect(masked.extensions.code).toBe('INTERNAL_SERVER_ERROR');
    const host = mask(fromResolver(new HostError('host at http://127.0.0.1:1234 failed')), 'Unexpected error.') as GraphQLError;
    expect(host.extensions.code).toBe('INTERNAL_SERVER_ERROR');
    expect(unexpected).toEqual([secret, expect.any(HostError)]);
  });

  it('gives errors of the request itself BAD_USER_INPUT', () => {
    const mask = createMaskError(() => {});
    const syntax = mask(new GraphQLError('Syntax Error: Expected Name, found <EOF>.'), 'x') as GraphQLError;
    expect(syntax.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('keeps the HTTP status a request error carries when it fills in the code', () => {
    const mask = createMaskError(() => {});
    const inner = new GraphQLError('Int cannot represent non-integer value: "x"');
    const coercion = new GraphQLError('Variable "$n" got invalid value "x"; Int cannot represent non-integer value: "x"', {
      originalError: inner,
      extensions: { http: { status: 400, spec: true } },
    });
    const masked = mask(coercion, 'x') as GraphQLError;
    expect(masked.extensions).toMatchObject({ code: 'BAD_USER_INPUT', http: { status: 400, spec: true } });
    expect(masked.message).toBe(coercion.message);
  });
});
