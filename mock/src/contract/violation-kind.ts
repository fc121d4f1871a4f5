// The kind of a violation in a report, such as `request.body` or `response.headers`: where in the
// exchange it is. The proxy's report and live mode's count violations by it, under the same names.

/** The kind of a violation line written `<side> <where> …` (`response header Link is required …`). */
export function kindOf(line: string): string {
  const [side = '', part = ''] = line.split(' ');
  const area = part.split(/[.:]/)[0] ?? '';
  return `${side}.${({ header: 'headers', content: 'content-type' } as Record<string, string>)[area] ?? area}`;
}
