// What a call returns, or undefined where it throws: for those that throw on what they cannot read (a decoder, a file).
export function attempt<T>(call: () => T): T | undefined {
  try {
    return call();
  } catch {
    return undefined;
  }
}
