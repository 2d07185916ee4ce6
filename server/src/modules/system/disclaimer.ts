import { eq } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { schema } from '../../db';

type Text = { title: string; body: string };
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** A per-language value (`{en: …, es: …}`, keys by short code or full tag) in the asked language, else English, else the first. */
function pick<T>(map: Record<string, unknown>, lang: string, read: (v: unknown) => T | null): T | null {
  const short = lang.slice(0, 2).toLowerCase();
  const keys = Object.keys(map);
  const order = [...keys.filter((k) => k.slice(0, 2).toLowerCase() === short), ...keys.filter((k) => k.slice(0, 2).toLowerCase() === 'en'), ...keys];
  for (const k of order) {
    const v = read(map[k]);
    if (v) return v;
  }
  return null;
}

const asText = (v: unknown): Text | null => (isRecord(v) && (typeof v.title === 'string' || typeof v.body === 'string') ? { title: str(v.title), body: str(v.body) } : null);

/**
 * The disclaimer in a language, from the `disclaimer` setting as stored: `{enabled, title, body}` with strings,
 * or with per-language maps as title and body, or per-language `{title, body}` (at the top or under
 * `texts`/`languages`/`i18n`). Read raw, so that any of these shapes works.
 */
export function disclaimerIn(raw: unknown, lang: string): Text & { enabled: boolean } {
  if (!isRecord(raw)) return { enabled: false, title: '', body: '' };
  const enabled = raw.enabled === true;
  if (typeof raw.title === 'string' || typeof raw.body === 'string') return { enabled, title: str(raw.title), body: str(raw.body) };
  if (isRecord(raw.title) || isRecord(raw.body)) {
    const title = isRecord(raw.title) ? (pick(raw.title, lang, (v) => (typeof v === 'string' && v ? v : null)) ?? '') : '';
    const body = isRecord(raw.body) ? (pick(raw.body, lang, (v) => (typeof v === 'string' && v ? v : null)) ?? '') : '';
    return { enabled, title, body };
  }
  for (const key of ['texts', 'languages', 'i18n', 'translations']) {
    if (isRecord(raw[key])) return { enabled, ...(pick(raw[key] as Record<string, unknown>, lang, asText) ?? { title: '', body: '' }) };
  }
  const rest = Object.fromEntries(Object.entries(raw).filter(([k]) => k !== 'enabled'));
  return { enabled, ...(pick(rest, lang, asText) ?? { title: '', body: '' }) };
}

export async function disclaimerOf(ctx: AppContext, lang: string) {
  const [row] = await ctx.db.select({ value: schema.config.value }).from(schema.config).where(eq(schema.config.key, 'disclaimer'));
  return disclaimerIn(row?.value, lang);
}
