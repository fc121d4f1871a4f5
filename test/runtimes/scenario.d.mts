// Types of scenario.mjs, which stays plain JavaScript so that every runtime loads it as it is.

export interface ScenarioConfig {
  /** The mock's API root, `http://127.0.0.1:PORT/api/v1`. */
  baseUrl: string;
  /** The API root of a server that accepts connections and never answers. */
  stallUrl: string;
  /** The API root of a server that answers the Basic credentials it received, decoded. */
  echoUrl: string;
  /** A webhook payload, its hook's secret, and its HMAC-SHA256 made by node:crypto. */
  webhook: { secret: string; payload: string; signature: string };
  /** What the mock answers, from the document's examples. */
  expected: {
    organizations: string[];
    label: unknown;
    attachment: unknown;
    markdown: string;
    notFoundMessage: string;
  };
}

export interface StepResult {
  step: string;
  ok: boolean;
  reason?: string;
}

export interface ScenarioResult {
  runtime: { name: string; version: string };
  steps: StepResult[];
}

export declare const STEP_NAMES: readonly string[];
export declare function currentRuntime(): ScenarioResult['runtime'];
export declare function runScenario(
  lib: typeof import('../../src/index.js'),
  config: ScenarioConfig,
): Promise<ScenarioResult>;
