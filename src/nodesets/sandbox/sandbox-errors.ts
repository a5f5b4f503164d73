import { CodedError } from '../../errors.js';

export class SandboxUnavailableError extends CodedError {
  constructor(message: string) {
    // The code leads the message: a handler's error crosses to the episode as its message.
    super('SANDBOX_UNAVAILABLE', `SANDBOX_UNAVAILABLE: ${message}`);
  }
}

export class SandboxSetupError extends CodedError {
  constructor(message: string) {
    super('SANDBOX_SETUP_FAILED', `SANDBOX_SETUP_FAILED: ${message}`);
  }
}
