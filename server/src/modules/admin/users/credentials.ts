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
const DARK = '#1a1b1e';
const GREY = '#5c5f66';

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
    const top = PAGE.margin + Math.floor(slot / COLS) * cardH + PAD;
    const w = cardW - 2 * PAD;
    const half = (w - 8) / 2;
    const r = rows[i]!;
    /** One line at (x, y), cut with an ellipsis when too long (never wrapped over the next one). */
    const line = (text: string, weight: 'text' | 'bold' | 'mono', size: number, at: { x: number; y: number; width: number }, color = DARK) =>
      doc.font(font(text, weight)).fontSize(size).fillColor(color).text(text, at.x, at.y, { width: at.width, height: size * 1.25, ellipsis: true, lineBreak: true });
    let y = top;
    line(r.organisation || labels.title, 'text', 8, { x, y, width: w }, GREY);
    y += 12;
    line(r.name || r.username, 'bold', 12, { x, y, width: w });
    y += 20;
    // What the person types is never cut: user name and password side by side when both fit, else each on a line of
    // its own, smaller if it must be; so is the address.
    const fit = (text: string, weight: 'bold' | 'mono' | 'text', size: number, width: number) =>
      Math.min(size, (size * (width - 2)) / Math.max(1, doc.font(font(text, weight)).fontSize(size).widthOfString(text)));
    const beside = fit(r.username, 'bold', 10.5, half) === 10.5 && fit(r.password, 'mono', 11.5, half) === 11.5;
    if (beside) {
      line(labels.username, 'text', 7.5, { x, y, width: half }, GREY);
      line(labels.password, 'text', 7.5, { x: x + half + 8, y, width: half }, GREY);
      y += 10;
      line(r.username, 'bold', 10.5, { x, y, width: half });
      line(r.password, 'mono', 11.5, { x: x + half + 8, y: y - 0.5, width: half });
      y += 19;
    } else {
      line(labels.username, 'text', 7.5, { x, y, width: w }, GREY);
      y += 10;
      line(r.username, 'bold', fit(r.username, 'bold', 10.5, w), { x, y, width: w });
      y += 17;
      line(labels.password, 'text', 7.5, { x, y, width: w }, GREY);
      y += 10;
      line(r.password, 'mono', fit(r.password, 'mono', 11.5, w), { x, y: y - 0.5, width: w });
      y += 17;
    }
    line(labels.address, 'text', 7.5, { x, y, width: w }, GREY);
    y += 10;
    line(signInUrl, 'text', fit(signInUrl, 'text', 10, w), { x, y, width: w });
    y += 16;
    doc.font(font(labels.change_hint, 'text')).fontSize(7.5).fillColor(GREY).text(labels.change_hint, x, y, { width: w, height: 20, ellipsis: true });
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
