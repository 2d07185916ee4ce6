/*
 * Intl's formats, made once per language and options: making one costs far more than using it (tenths of a
 * millisecond against microseconds), and a screen writes hundreds of numbers and dates (a chart's ticks, a table's rows).
 */
const numberFormats = new Map<string, Intl.NumberFormat>();
const dateTimeFormats = new Map<string, Intl.DateTimeFormat>();

function once<T>(made: Map<string, T>, key: string, make: () => T): T {
  let format = made.get(key);
  if (!format) made.set(key, (format = make()));
  return format;
}

/** `new Intl.NumberFormat(lang, options)`, the same one each time. */
export const numberFormat = (lang: string, options?: Intl.NumberFormatOptions): Intl.NumberFormat =>
  once(numberFormats, `${lang} ${JSON.stringify(options ?? {})}`, () => new Intl.NumberFormat(lang, options));

/** `new Intl.DateTimeFormat(lang, options)`, the same one each time. */
export const dateTimeFormat = (lang: string, options?: Intl.DateTimeFormatOptions): Intl.DateTimeFormat =>
  once(dateTimeFormats, `${lang} ${JSON.stringify(options ?? {})}`, () => new Intl.DateTimeFormat(lang, options));
