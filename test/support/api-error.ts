// The ApiError a call rejects with; the test fails when the call resolves or throws anything else.
import { expect } from 'vitest';
import { ApiError } from '../../src/index.js';

export async function apiErrorOf(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}
