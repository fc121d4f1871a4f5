// A seed as the command line gives it (`--seed 7`) and as a script may (`seed: 7`): the same
// text either way, so that both make the same answers, delays and faults.

/** The seed's text (`7` and `'7'` alike), or undefined for none; anything else is a TypeError. */
export function seedText(seed: unknown): string | undefined {
  if (seed === undefined || typeof seed === 'string') return seed;
  if (typeof seed === 'number' && Number.isFinite(seed)) return String(seed);
  throw new TypeError('seed must be a string or a finite number, such as 7');
}
