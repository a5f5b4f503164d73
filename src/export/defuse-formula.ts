/**
 * Text a spreadsheet will not run as a formula: a text starting with `=`, `+`, `-`, `@`, a tab or
 * a CR gets a leading `'` (OWASP's advice against CSV injection). Dataset text and model output
 * reach the CSV export, and a cell like `=HYPERLINK(...)` would otherwise run when the file is
 * opened.
 */
export const defuseFormula = (text: string): string => (/^[=+\-@\t\r]/.test(text) ? `'${text}` : text);
