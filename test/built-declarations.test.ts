// The declaration files both builds ship are TypeScript that parses: a build plugin that writes a
// text file over one (mock/dist/answering.d.mts) would otherwise show only in a consumer's
// type-check in `npm run test:dist`. Each is parsed here, in a few milliseconds. And they
// import only packages whose types a consumer's compiler checks cleanly without skipLibCheck:
// Prism's types reach the untyped pino, so a declaration that imports them fails a strict project.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { OUTPUTS } = (await import(`${ROOT}/scripts/build-if-stale.mjs`)) as { OUTPUTS: string[] };
const DECLARATIONS = OUTPUTS.filter((output) => /\.d\.(c|m)?ts$/.test(output));

describe('the built declaration files', () => {
  it('are every declaration file the builds write', () => {
    const written = ['dist', 'mock/dist'].flatMap((folder) =>
      readdirSync(`${ROOT}/${folder}`)
        .filter((name) => /\.d\.(c|m)?ts$/.test(name))
        .map((name) => `${folder}/${name}`),
    );
    expect(DECLARATIONS.sort()).toEqual(written.sort());
  });

  it('parse as TypeScript', () => {
    // Syntax only: what they import is not resolved, as a consumer's type-check would.
    const program = ts.createProgram(
      DECLARATIONS.map((file) => `${ROOT}/${file}`),
      { noEmit: true, noResolve: true, types: [] },
    );
    const errors = DECLARATIONS.flatMap((file) =>
      program
        .getSyntacticDiagnostics(program.getSourceFile(`${ROOT}/${file}`))
        .map((diagnostic) => `${file}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`),
    );
    expect(errors).toEqual([]);
    expect(DECLARATIONS.every((file) => program.getSourceFile(`${ROOT}/${file}`) !== undefined)).toBe(true);
  });

  it('import only their own files, openapi-fetch (the client), gitea-contract and msw (the mock)', () => {
    const allowed = /^(\.\.?\/|openapi-fetch$|gitea-contract$|msw$)/;
    const imported = DECLARATIONS.flatMap((file) => {
      const source = ts.createSourceFile(file, readFileSync(`${ROOT}/${file}`, 'utf8'), ts.ScriptTarget.ES2022);
      const specifiers: string[] = [];
      const visit = (node: ts.Node): void => {
        if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
          specifiers.push((node.moduleSpecifier as ts.StringLiteral).text);
        if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
          specifiers.push((node.argument.literal as ts.StringLiteral).text);
        ts.forEachChild(node, visit);
      };
      visit(source);
      return specifiers.map((specifier) => `${file}: ${specifier}`);
    });
    expect(imported.filter((line) => !allowed.test(line.split(': ')[1]!))).toEqual([]);
    expect(imported).toContain('mock/dist/msw.d.mts: msw');
  });
});
