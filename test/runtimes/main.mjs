// The scenario's entry in Node, Deno and Bun: the built client as a user's code imports it (its
// bare `openapi-fetch` import resolved from node_modules), the scenario run with the JSON
// configuration of the first argument, and the result printed as one line of JSON.
import * as giteaContract from '../../dist/index.js';
import { runScenario } from './scenario.mjs';

const [config] = globalThis.Deno ? globalThis.Deno.args : globalThis.process.argv.slice(2);
console.log(JSON.stringify(await runScenario(giteaContract, JSON.parse(config))));
