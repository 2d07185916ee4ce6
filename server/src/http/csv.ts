/**
 * CSV cells of every export (users, audit log, a deployment's direct-viewer links): one rule.
 *
 * A spreadsheet reads a cell that starts with = + - @, a tab or a carriage return as a formula, and
 * it may split the file on `;` as well as `,` (the list separator of many locales), so a piece of a
 * cell after either separator is a cell start too. Every such start gets a single quote in front,
 * which spreadsheets show as text. Then the cell is quoted (RFC 4180) when it holds a separator
 * (`,` or `;`), a quote or a line end, so that a reader that honours quotes keeps it whole.
 */
const FORMULA_START = /(^|[,;])([=+\-@\t\r])/g;

export function csvCell(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  const inert = text.replace(FORMULA_START, "$1'$2");
  return /[",;\r\n]/.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}

/** One line of cells, without its line end. */
export const csvRow = (values: readonly unknown[]) => values.map(csvCell).join(',');

/** A whole file: the lines with CRLF ends. */
export const csvFile = (rows: readonly (readonly unknown[])[]) => rows.map((r) => `${csvRow(r)}\r\n`).join('');
