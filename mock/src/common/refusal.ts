// The mock's one way to refuse: a Refusal carries its status, made an answer or an exit status in one place each.
export class Refusal extends Error {
  constructor(
    /** The HTTP status; for a command, the exit status. */
    readonly status: number,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A command's usage error: exit status 2, its message shown with the usage. */
export const usageError = (message: string): Refusal => new Refusal(2, message);
