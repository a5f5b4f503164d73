import { constants } from 'node:os';

/** The shell's exit status for a command ended by `signal`: 128 + its number (130 after Ctrl-C, 143 after SIGTERM), so a script can tell which it sent. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 2);
}
