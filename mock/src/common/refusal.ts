// The mock's one way to refuse: where it finds what it will not do, it throws a Refusal that
// carries the status the refusal is answered with, and each way in turns it into its wire format
// in one place: the front and the proxy into an answer in the service's error dialect with that
// HTTP status, the commands into a line on stderr and that exit status. Anything else thrown is a
// failure of the mock itself, which says so (a 500, or `cannot start`).
export class Refusal extends Error {
  constructor(
    /** The HTTP status it is answered with; for a command, the exit status. */
    readonly status: number,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A command's usage error: exit status 2, its message shown with the usage. */
export function usageError(message: string): Refusal {
  return new Refusal(2, message);
}
