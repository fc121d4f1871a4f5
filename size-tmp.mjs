import { rolldown } from 'rolldown';
import { gzipSync } from 'node:zlib';
const input = process.argv[2];
const build = await rolldown({ input, platform: 'browser', logLevel: 'silent', resolve: { modules: ['/work/main/node_modules'] } });
const { output } = await build.generate({ format: 'esm', minify: true });
const code = output[0].code;
console.log(code.length, gzipSync(code, { level: 9 }).length);
