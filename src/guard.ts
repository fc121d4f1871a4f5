// What every helper's errors go through: whatever a helper raises, it leaves with every secret
// of its client redacted.
import { scrubFor, type GiteaClient } from './client.js';

export async function guard<T>(client: GiteaClient, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw scrubFor(client, error);
  }
}
