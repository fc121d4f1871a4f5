// The kind of a violation line written `<side> <where> …`, such as `response.headers`, in the proxy's and live mode's reports.
export function kindOf(line: string): string {
  const [side = '', part = ''] = line.split(' ');
  const area = part.split(/[.:]/)[0] ?? '';
  return `${side}.${({ header: 'headers', content: 'content-type' } as Record<string, string>)[area] ?? area}`;
}
