// What the MSW handlers' browser build gives for Node's `path`, which the one module of Prism's
// validator that reaches it (mime-types, through type-is) uses for `extname` alone. The results of
// Node's path.extname on Linux: from the last `.` of the last segment (trailing slashes aside),
// nothing when that dot starts the segment, or when the segment is `..`.
export function extname(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  const base = trimmed.slice(trimmed.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot <= 0 || base === '..' ? '' : base.slice(dot);
}

export default { extname };
