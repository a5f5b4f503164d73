/** The errors of run-spec parsing: bad input names the field (and the limit it broke); a bad spec.json is SPEC_INVALID. */
import { BadInputError, CodedError } from '../errors.js';

/** A submitted run field that is wrong. `field` is its name in the spec; `limit` the bound it broke, if one. */
export class RunInputError extends BadInputError {
  readonly field: string;
  readonly limit: number | undefined;
  constructor(message: string, field: string, limit?: number) {
    super(message);
    this.field = field;
    this.limit = limit;
  }
}

/** A run directory's spec.json that does not hold a valid spec (hand-edited, truncated, from elsewhere). */
export class SpecInvalidError extends CodedError {
  readonly field: string;
  constructor(message: string, field: string) {
    super('SPEC_INVALID', message);
    this.field = field;
  }
}
