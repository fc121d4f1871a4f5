// unwrap: the data of a call, or the call's error thrown as an ApiError.
import { errorOf } from './client.js';

/** Resolves to `data` of a 2xx answer; throws an `ApiError` for any other. */
export async function unwrap<Data>(call: Promise<{ data?: Data; error?: unknown; response: Response }>): Promise<Data> {
  const { data, response } = await call;
  const error = errorOf(response);
  if (error) throw error;
  return data as Data;
}
