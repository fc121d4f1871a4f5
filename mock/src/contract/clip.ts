// Long texts in lines and reports: a peer's field name or value may be megabytes long.

/** `text` cut to `max` characters, marked with `…` when cut; redact anything secret before. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
