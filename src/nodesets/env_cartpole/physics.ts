/**
 * Cart-pole dynamics of Barto, Sutton & Anderson (1983) with the constants and the explicit
 * Euler update of Gym's CartPole-v1, in the same order of operations.
 */
import type { Prng } from '../../core/prng.js';

export const GRAVITY = 9.8;
export const MASS_CART = 1.0;
export const MASS_POLE = 0.1;
export const TOTAL_MASS = MASS_POLE + MASS_CART;
/** Half the pole's length. */
export const LENGTH = 0.5;
export const POLE_MASS_LENGTH = MASS_POLE * LENGTH;
export const FORCE_MAG = 10.0;
/** Seconds between state updates. */
export const TAU = 0.02;
export const X_THRESHOLD = 2.4;
export const THETA_THRESHOLD_RADIANS = (12 * 2 * Math.PI) / 360;
/** Steps after which an episode that kept the pole up ends as a success. */
export const MAX_STEPS = 500;
/** Half-width of the uniform distribution of every initial state component. */
export const INITIAL_STATE_RANGE = 0.05;

/** `[x, x_dot, theta, theta_dot]`: cart position (m), velocity, pole angle (rad, 0 upright), angular velocity. */
export type CartPoleState = [number, number, number, number];

/** Action 1 pushes the cart right, 0 pushes it left. */
export type CartPoleAction = 0 | 1;

export function stepPhysics(state: readonly number[], action: CartPoleAction): CartPoleState {
  let [x, xDot, theta, thetaDot] = state as CartPoleState;
  const force = action === 1 ? FORCE_MAG : -FORCE_MAG;
  const costheta = Math.cos(theta);
  const sintheta = Math.sin(theta);
  const temp = (force + POLE_MASS_LENGTH * (thetaDot * thetaDot) * sintheta) / TOTAL_MASS;
  const thetaacc = (GRAVITY * sintheta - costheta * temp) / (LENGTH * (4.0 / 3.0 - (MASS_POLE * (costheta * costheta)) / TOTAL_MASS));
  const xacc = temp - (POLE_MASS_LENGTH * thetaacc * costheta) / TOTAL_MASS;
  x = x + TAU * xDot;
  xDot = xDot + TAU * xacc;
  theta = theta + TAU * thetaDot;
  thetaDot = thetaDot + TAU * thetaacc;
  return [x, xDot, theta, thetaDot];
}

/** The pole fell past 12° or the cart left the track. */
export function isFallen(state: readonly number[]): boolean {
  const [x, , theta] = state as CartPoleState;
  return x < -X_THRESHOLD || x > X_THRESHOLD || theta < -THETA_THRESHOLD_RADIANS || theta > THETA_THRESHOLD_RADIANS;
}

export function initialState(prng: Prng): CartPoleState {
  const u = (): number => -INITIAL_STATE_RANGE + 2 * INITIAL_STATE_RANGE * prng.next();
  return [u(), u(), u(), u()];
}

export function parseCartPoleAction(value: unknown): CartPoleAction {
  if (value === 0 || value === 1) return value;
  if (value === '0' || value === 'left') return 0;
  if (value === '1' || value === 'right') return 1;
  throw new Error(`unknown cart-pole action ${JSON.stringify(value)}; expected 0 (push left) or 1 (push right)`);
}
