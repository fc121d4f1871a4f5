// Long texts in lines and reports: a peer's field name or value may be megabytes long.
export const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);
