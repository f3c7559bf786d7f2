import PDFDocument from 'pdfkit'
import type { Cell, ReportContent, Table } from './model.js'

const MARGIN = 50
const INK = '#1f2933'
const MUTED = '#616e7c'
const BAR = '#2f6fbd'
const RULE = '#cbd2d9'
/** Rows of one table the PDF shows; the CSV has them all. */
const PDF_TABLE_ROWS = 2_000

const cellText = (cell: Cell) => (cell === null ? '' : String(cell))
const periodText = (content: ReportContent) =>
  `${content.from.toISOString().slice(0, 16).replace('T', ' ')} – ${content.to.toISOString().slice(0, 16).replace('T', ' ')} UTC`

/**
 * The report as a PDF (pdfkit, standard Helvetica): title and period, the summary, a bar chart of
 * the period drawn as vector shapes, the tables and the notes.
 */
export function renderPdf(content: ReportContent, organizationName: string, generatedAt: Date): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    bufferPages: true,
    info: { Title: `${content.title} report: ${organizationName}`, Author: 'Incident Platform', CreationDate: generatedAt },
  })
  const chunks: Buffer[] = []
  doc.on('data', (chunk: Buffer) => chunks.push(chunk))
  const finished = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)))
    doc.on('error', reject)
  })
  const width = doc.page.width - 2 * MARGIN

  doc.font('Helvetica-Bold').fontSize(20).fillColor(INK).text(`${content.title} report`)
  doc.font('Helvetica').fontSize(11).fillColor(MUTED).text(organizationName).text(periodText(content))
  doc.text(`Generated ${generatedAt.toISOString().slice(0, 19).replace('T', ' ')} UTC`).moveDown()

  doc.font('Helvetica-Bold').fontSize(13).fillColor(INK).text('Summary').moveDown(0.3)
  for (const item of content.summary) {
    doc.font('Helvetica').fontSize(10).fillColor(MUTED).text(`${item.label}: `, { continued: true })
    doc.fillColor(INK).text(item.value)
  }
  doc.moveDown()
  drawChart(doc, content.chart, width)
  for (const table of content.tables) drawTable(doc, table, width)
  if (content.notes.length) {
    doc.moveDown().font('Helvetica-Bold').fontSize(13).fillColor(INK).text('Notes', MARGIN).moveDown(0.3)
    for (const note of content.notes) doc.font('Helvetica').fontSize(10).fillColor(INK).text(`• ${note}`, { width })
  }
  const pages = doc.bufferedPageRange()
  for (let page = pages.start; page < pages.start + pages.count; page++) {
    doc.switchToPage(page)
    // Inside the bottom margin: without this, pdfkit would start a new page for the footer.
    doc.page.margins.bottom = 0
    doc.font('Helvetica').fontSize(8).fillColor(MUTED)
    doc.text(`${content.title} report · page ${page + 1} of ${pages.count}`, MARGIN, doc.page.height - MARGIN + 15, {
      width,
      align: 'right',
      lineBreak: false,
    })
  }
  doc.end()
  return finished
}

function drawChart(doc: PDFKit.PDFDocument, chart: ReportContent['chart'], width: number) {
  const height = 140
  if (doc.y + height + 60 > doc.page.height - MARGIN) doc.addPage()
  doc.font('Helvetica-Bold').fontSize(13).fillColor(INK).text(chart.title, MARGIN).moveDown(0.3)
  const top = doc.y
  const axis = 40
  const plotWidth = width - axis
  const max = Math.max(0, ...chart.points.map((point) => point.value))
  const scale = max > 0 ? height / max : 0
  doc.font('Helvetica').fontSize(8).fillColor(MUTED)
  doc.text(formatAxis(max), MARGIN, top - 4, { width: axis - 4, align: 'right', lineBreak: false })
  doc.text('0', MARGIN, top + height - 6, { width: axis - 4, align: 'right', lineBreak: false })
  doc
    .moveTo(MARGIN + axis, top)
    .lineTo(MARGIN + axis, top + height)
    .lineTo(MARGIN + width, top + height)
    .lineWidth(0.5)
    .strokeColor(RULE)
    .stroke()
  const slot = chart.points.length ? plotWidth / chart.points.length : plotWidth
  chart.points.forEach((point, index) => {
    const barHeight = point.value * scale
    if (barHeight > 0)
      doc.rect(MARGIN + axis + index * slot + slot * 0.1, top + height - barHeight, Math.max(slot * 0.8, 0.5), barHeight).fill(BAR)
  })
  const first = chart.points[0]?.label ?? ''
  const last = chart.points.at(-1)?.label ?? ''
  doc.fillColor(MUTED).text(first, MARGIN + axis, top + height + 4, { lineBreak: false })
  doc.text(last, MARGIN + axis, top + height + 4, { width: plotWidth, align: 'right', lineBreak: false })
  doc.text(`Peak: ${formatAxis(max)} ${chart.unit}`, MARGIN + axis, top + height + 16, {
    width: plotWidth,
    align: 'center',
    lineBreak: false,
  })
  doc.x = MARGIN
  doc.y = top + height + 40
}

const formatAxis = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2))

function drawTable(doc: PDFKit.PDFDocument, table: Table, width: number) {
  if (doc.y + 60 > doc.page.height - MARGIN) doc.addPage()
  doc.moveDown().font('Helvetica-Bold').fontSize(13).fillColor(INK).text(table.title, MARGIN).moveDown(0.3)
  if (table.rows.length === 0) {
    doc.font('Helvetica').fontSize(10).fillColor(MUTED).text('Nothing in this period.', MARGIN)
    return
  }
  const column = width / table.columns.length
  const row = (cells: string[], font: string) => {
    doc.font(font).fontSize(8)
    const height = Math.max(...cells.map((cell) => doc.heightOfString(cell, { width: column - 4 }))) + 4
    if (doc.y + height > doc.page.height - MARGIN) doc.addPage()
    const top = doc.y
    cells.forEach((cell, index) => doc.fillColor(INK).text(cell, MARGIN + index * column, top, { width: column - 4 }))
    doc
      .moveTo(MARGIN, top + height - 1)
      .lineTo(MARGIN + width, top + height - 1)
      .lineWidth(0.3)
      .strokeColor(RULE)
      .stroke()
    doc.x = MARGIN
    doc.y = top + height
  }
  row(table.columns, 'Helvetica-Bold')
  for (const cells of table.rows.slice(0, PDF_TABLE_ROWS)) row(cells.map(cellText), 'Helvetica')
  if (table.rows.length > PDF_TABLE_ROWS)
    doc
      .font('Helvetica')
      .fontSize(9)
      .fillColor(MUTED)
      .text(`${table.rows.length - PDF_TABLE_ROWS} more rows are in the CSV export.`, MARGIN)
}
