import { describe, expect, it } from 'vitest';
import {
  isFallen,
  MAX_STEPS,
  parseCartPoleAction,
  stepPhysics,
  THETA_THRESHOLD_RADIANS,
} from '../../../src/nodesets/env_cartpole/physics.js';

describe('cart-pole physics (Gym CartPole-v1)', () => {
  it('matches a hand-computed step from rest', () => {
    // From rest, pushing right: temp = 10/1.1 = 100/11; thetaacc = −(100/11)/(0.5·(4/3 − 0.1/1.1)) = −600/41;
    // xacc = 100/11 + 0.05·(600/41)/1.1 = 400/41; Euler with tau 0.02 moves only the velocities.
    const [x, xDot, theta, thetaDot] = stepPhysics([0, 0, 0, 0], 1);
    expect(x).toBe(0);
    expect(theta).toBe(0);
    expect(xDot).toBeCloseTo(8 / 41, 15);
    expect(thetaDot).toBeCloseTo(-12 / 41, 15);
    const left = stepPhysics([0, 0, 0, 0], 0);
    expect(left[1]).toBeCloseTo(-8 / 41, 15);
    expect(left[3]).toBeCloseTo(12 / 41, 15);
  });

  it('matches Gym’s update from a tilted, moving state', () => {
    // Reference values from Gym's formulas evaluated in float64.
    const s = stepPhysics([0.1, -0.2, 0.05, 0.3], 0);
    expect(s[0]).toBeCloseTo(0.096, 15);
    expect(s[1]).toBeCloseTo(-0.3957976546439626, 14);
    expect(s[2]).toBeCloseTo(0.056, 15);
    expect(s[3]).toBeCloseTo(0.6080233136061515, 14);
  });

  it('falls past 12° or ±2.4 m', () => {
    expect(THETA_THRESHOLD_RADIANS).toBeCloseTo(0.20943951, 8);
    expect(isFallen([0, 0, 0.2, 0])).toBe(false);
    expect(isFallen([0, 0, 0.21, 0])).toBe(true);
    expect(isFallen([0, 0, -0.21, 0])).toBe(true);
    expect(isFallen([2.39, 0, 0, 0])).toBe(false);
    expect(isFallen([-2.41, 0, 0, 0])).toBe(true);
    expect(MAX_STEPS).toBe(500);
  });

  it('accepts 0/1 actions and names a bad one', () => {
    expect(parseCartPoleAction(0)).toBe(0);
    expect(parseCartPoleAction('1')).toBe(1);
    expect(() => parseCartPoleAction(2)).toThrow(/unknown cart-pole action 2/);
  });
});
