/** The errors of run-spec parsing: bad input names the field (and the limit it broke); a bad spec.json is SPEC_INVALID. */
import { CodedError } from '../errors.js';

export { RunInputError } from '../errors.js';

/** A run directory's spec.json that does not hold a valid spec (hand-edited, truncated, from elsewhere). */
export class SpecInvalidError extends CodedError {
  readonly field: string;
  constructor(message: string, field: string) {
    super('SPEC_INVALID', message);
    this.field = field;
  }
}
