// unwrap: the data of a call, or the call's error thrown as an ApiError.
import { errorOf } from './client.js';

/** Resolves to `data` of a 2xx answer; throws an `ApiError` for any other. */
export async function unwrap<Data>(call: Promise<{ data?: Data; error?: unknown; response: Response }>): Promise<Data> {
  const result = await call;
  const error = errorOf(result);
  if (error) throw error;
  return result.data as Data;
}
