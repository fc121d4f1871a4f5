// The mock's one way to refuse: a Refusal carries the status it is answered with, and each way in turns it into its
// wire format in one place (an answer in the error dialect, or a line on stderr and an exit status). Anything else
// thrown is a failure of the mock itself, which says so (a 500, or `cannot start`).
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
