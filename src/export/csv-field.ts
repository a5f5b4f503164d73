/**
 * One CSV field as RFC 4180 writes it: quoted when it holds a comma, a quote, CR or LF (or
 * starts or ends with a space, which some readers trim), quotes doubled. Hand-written: the
 * kept csv-parse reads CSV but does not write it, and this is the whole of the rule.
 */
export function csvField(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One CSV record, CRLF-terminated as RFC 4180 says. */
export const csvRow = (fields: readonly string[]): string => fields.map(csvField).join(',') + '\r\n';
