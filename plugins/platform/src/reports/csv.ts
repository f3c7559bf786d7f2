import { stringify } from 'csv-stringify/sync'
import type { Cell, ReportContent } from './model.js'

/**
 * A text cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, carriage return)
 * starts with an apostrophe instead (OWASP, "CSV Injection"): audit entries and alert titles
 * carry text others wrote. Numbers are left as they are.
 */
function neutralised(cell: Cell): Cell {
  return typeof cell === 'string' && /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell
}

/** The report's detail table as RFC 4180 CSV with a header row, CRLF line ends and a UTF-8 byte order mark for spreadsheets. */
export function renderCsv(content: ReportContent): Buffer {
  const text = stringify(
    content.detail.rows.map((row) => row.map(neutralised)),
    { header: true, columns: content.detail.columns, record_delimiter: 'windows', bom: true, cast: { number: (value) => String(value) } },
  )
  return Buffer.from(text, 'utf8')
}
