// Types of the small packages that ship none, and of the bundled document: only what is used.
declare module 'uri-template-lite' {
  /** RFC 6570 templates, as Prism's request check matches paths with them. */
  const uriTemplate: {
    URI: { Template: new (template: string) => { match(uri: string): Record<string, string | string[]> | null } };
  };
  export default uriTemplate;
}

declare module 'fs-native-extensions' {
  /** Takes an exclusive lock on the whole file open as `fd`, held by the kernel until the file is closed; false when another holds one. */
  export function tryLock(fd: number): boolean;
}

// The package's document, which the MSW handlers' browser build imports as data (mock/tsdown.config.ts parses it).
declare module 'gitea-contract/openapi.yaml' {
  const document: Record<string, unknown>;
  export default document;
}
