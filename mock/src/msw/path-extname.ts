// Node's `path` in the MSW handlers' browser build, for mime-types' `extname` alone: Node's results on Linux.
export function extname(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  const base = trimmed.slice(trimmed.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot <= 0 || base === '..' ? '' : base.slice(dot);
}

export default { extname };
