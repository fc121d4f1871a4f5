// Long texts in lines and reports: a peer's field name or value may be megabytes long.
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
