/** The Habitat navigation action space. */

export const ACTIONS = ['stop', 'forward', 'turn_left', 'turn_right'] as const;
export type Action = (typeof ACTIONS)[number];

/** Accepts the action names, Habitat's `move_forward`, or Habitat's integer ids (0 stop, 1 forward, 2 left, 3 right). */
export function parseAction(value: unknown): Action {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < ACTIONS.length) return ACTIONS[value]!;
  if (value === 'move_forward') return 'forward';
  if (typeof value === 'string' && (ACTIONS as readonly string[]).includes(value)) return value as Action;
  throw new Error(`unknown gridnav action ${JSON.stringify(value)}; expected one of ${ACTIONS.join(', ')} or 0..3`);
}
