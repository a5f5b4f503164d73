/** The infrastructure-failure outcome: counted plays (all but CANCELLED), the threshold, and the first error by index. */
import { describe, expect, it } from 'vitest';
import { infraFailureOf } from '../../src/store/infra-failure.js';

const play = (index: number, status: string, error?: string) => ({ index, status, ...(error ? { error } : {}) });

describe('infraFailureOf', () => {
  const plays = [
    play(3, 'INFRA_ERROR', 'connection refused at B'),
    play(0, 'COMPLETED'),
    play(1, 'INFRA_ERROR', 'connection refused at A'),
    play(2, 'CANCELLED'),
    play(4, 'ERROR', 'a node failed'),
  ];

  it('by default any INFRA_ERROR play fails the run, naming how many of the counted plays and the lowest-index error', () => {
    expect(infraFailureOf(plays)).toEqual({
      code: 'INFRA_ERRORS',
      message: '2 of 4 plays ended INFRA_ERROR; the first, play 1: connection refused at A',
    });
  });

  it('within maxInfraErrorRate (over the counted plays, CANCELLED left out) the run is not failed', () => {
    expect(infraFailureOf(plays, 0.5)).toBeNull();
    expect(infraFailureOf(plays, 0.49)?.message).toBe(
      '2 of 4 plays ended INFRA_ERROR (more than maxInfraErrorRate 0.49); the first, play 1: connection refused at A',
    );
    expect(infraFailureOf([play(0, 'COMPLETED'), play(1, 'CANCELLED')])).toBeNull();
    expect(infraFailureOf([])).toBeNull();
  });
});
