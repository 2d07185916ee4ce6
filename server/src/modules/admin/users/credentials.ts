import { existsSync } from 'node:fs';
import PDFDocument from 'pdfkit';
import type { TCredentialRow, TCredentialSheet } from '@vdi/contracts';
import { csvFile } from '../../../http/csv';

/**
 * The credentials sheet of classroom accounts (decision 0028): rendered from the rows the browser sends
 * back, answered, never stored. The sign-in address is the configured public address only.
 */

type Labels = TCredentialSheet['labels'];

/** UTF-8 with a byte-order mark, so that spreadsheets read accents and other scripts right. */
export function credentialsCsv(rows: readonly TCredentialRow[], labels: Labels, signInUrl: string): string {
  const head = [labels.name, labels.username, labels.password, labels.address, labels.organisation];
  return `\uFEFF${csvFile([head, ...rows.map((r) => [r.name, r.username, r.password, signInUrl, r.organisation])])}`;
}

/** Debian's fonts (fonts-dejavu-core, fonts-noto-cjk): Latin, Greek, Cyrillic, Arabic, Hebrew in DejaVu; Chinese, Japanese, Korean in Noto CJK. */
const FONTS = {
  text: '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  bold: '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
  mono: '/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf',
  cjk: '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc',
  cjkBold: '/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc',
};
const CJK = /[\p{Script=Han}\p{Script=Hangul}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Bopomofo}\u3000-\u303f\uff00-\uffef]/u;

/** A4 in points, two columns of five cards, dashed cut lines between them. */
const PAGE = { width: 595.28, height: 841.89, margin: 28 };
const COLS = 2;
const ROWS = 5;
const PAD = 14;

export async function credentialsPdf(rows: readonly TCredentialRow[], labels: Labels, signInUrl: string): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: 0, autoFirstPage: false, info: { Title: labels.title } });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  const have = (f: keyof typeof FONTS) => existsSync(FONTS[f]);
  if (have('text')) doc.registerFont('text', FONTS.text);
  if (have('bold')) doc.registerFont('bold', FONTS.bold);
  if (have('mono')) doc.registerFont('mono', FONTS.mono);
  if (have('cjk')) doc.registerFont('cjk', FONTS.cjk, 'NotoSansCJKsc-Regular');
  if (have('cjkBold')) doc.registerFont('cjkBold', FONTS.cjkBold, 'NotoSansCJKsc-Bold');
  /** The font for a piece of text: CJK when it holds such characters, the built-in ones when Debian's are missing. */
  const font = (text: string, weight: 'text' | 'bold' | 'mono') => {
    if (CJK.test(text) && have(weight === 'bold' ? 'cjkBold' : 'cjk')) return weight === 'bold' ? 'cjkBold' : 'cjk';
    if (have(weight)) return weight;
    return weight === 'mono' ? 'Courier-Bold' : weight === 'bold' ? 'Helvetica-Bold' : 'Helvetica';
  };

  const cardW = (PAGE.width - 2 * PAGE.margin) / COLS;
  const cardH = (PAGE.height - 2 * PAGE.margin) / ROWS;
  const perPage = COLS * ROWS;
  for (let i = 0; i < rows.length; i++) {
    const slot = i % perPage;
    if (slot === 0) {
      doc.addPage({ size: 'A4', margin: 0 });
      const onPage = Math.min(perPage, rows.length - i);
      cutLines(doc, cardW, cardH, onPage);
    }
    const x = PAGE.margin + (slot % COLS) * cardW + PAD;
    const y = PAGE.margin + Math.floor(slot / COLS) * cardH + PAD;
    const w = cardW - 2 * PAD;
    const r = rows[i]!;
    const line = (text: string, weight: 'text' | 'bold' | 'mono', size: number, color = '#1a1b1e') =>
      doc.font(font(text, weight)).fontSize(size).fillColor(color).text(text, { width: w, height: size * 1.2, ellipsis: true });
    doc.x = x;
    doc.y = y;
    line(r.organisation || labels.title, 'text', 8, '#5c5f66');
    doc.moveDown(0.3);
    line(r.name || r.username, 'bold', 12);
    doc.moveDown(0.4);
    field(labels.username, r.username, 'bold');
    field(labels.password, r.password, 'mono');
    field(labels.address, signInUrl, 'text');
    doc.moveDown(0.2);
    doc.font(font(labels.change_hint, 'text')).fontSize(7.5).fillColor('#5c5f66').text(labels.change_hint, { width: w, height: 22, ellipsis: true });

    function field(label: string, value: string, weight: 'text' | 'bold' | 'mono') {
      const top = doc.y;
      doc.font(font(label, 'text')).fontSize(8).fillColor('#5c5f66').text(label, x, top, { width: w * 0.34, lineBreak: false, ellipsis: true });
      doc.font(font(value, weight)).fontSize(weight === 'mono' ? 11 : 9.5).fillColor('#1a1b1e').text(value, x + w * 0.36, top - (weight === 'mono' ? 1.5 : 0.5), {
        width: w * 0.64, lineBreak: false, ellipsis: true,
      });
      doc.x = x;
      doc.y = top + 16;
    }
  }
  doc.end();
  await ended;
  return Buffer.concat(chunks);
}

/** Dashed lines around and between the cards of a page (only as far as the cards on it go). */
function cutLines(doc: PDFKit.PDFDocument, cardW: number, cardH: number, cards: number) {
  const rowsUsed = Math.ceil(cards / COLS);
  const left = PAGE.margin;
  const top = PAGE.margin;
  doc.save().lineWidth(0.6).strokeColor('#909296').dash(4, { space: 3 });
  for (let r = 0; r <= rowsUsed; r++) doc.moveTo(left, top + r * cardH).lineTo(left + COLS * cardW, top + r * cardH).stroke();
  for (let c = 0; c <= COLS; c++) doc.moveTo(left + c * cardW, top).lineTo(left + c * cardW, top + rowsUsed * cardH).stroke();
  doc.restore();
}
