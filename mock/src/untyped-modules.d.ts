// Types of the two small packages the examples source asks as Prism does (negotiation.ts), which
// ship none of their own: only what is used.
declare module 'accepts' {
  interface Accepts {
    /** The first of `types` the request's Accept header prefers, or false. */
    type(types: string[]): string | false;
  }
  export default function accepts(request: { headers: Record<string, string | undefined> }): Accepts;
}

declare module 'content-type' {
  interface ContentType {
    type: string;
    parameters: Record<string, string>;
  }
  const contentType: {
    /** Throws a TypeError on what is no media type. */
    parse(value: string): ContentType;
    format(value: ContentType): string;
  };
  export default contentType;
}

// The package's document, which the MSW handlers' browser build imports as data: the build
// (mock/tsdown.config.ts) parses the YAML and bundles the result.
declare module 'gitea-contract/openapi.yaml' {
  const document: Record<string, unknown>;
  export default document;
}
