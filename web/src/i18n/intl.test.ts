import { describe, expect, it } from 'vitest';
import { dateTimeFormat, numberFormat } from './intl';

/** How many number formats `fn` makes. */
function numberFormatsMade(fn: () => void): number {
  const Original = Intl.NumberFormat;
  let made = 0;
  Intl.NumberFormat = class extends Original {
    constructor(...args: ConstructorParameters<typeof Original>) {
      super(...args);
      made++;
    }
  } as typeof Intl.NumberFormat;
  try {
    fn();
  } finally {
    Intl.NumberFormat = Original;
  }
  return made;
}

describe('Intl formats', () => {
  it('are made once per language and options', () => {
    expect(numberFormatsMade(() => {
      for (let i = 0; i < 100; i++) numberFormat('ca', { maximumFractionDigits: 1 }).format(i / 3);
    })).toBe(1);
    expect(numberFormat('ca', { maximumFractionDigits: 1 })).toBe(numberFormat('ca', { maximumFractionDigits: 1 }));
    expect(numberFormat('ca', { maximumFractionDigits: 2 })).not.toBe(numberFormat('ca', { maximumFractionDigits: 1 }));
    expect(numberFormat('de')).not.toBe(numberFormat('ca'));
  });

  it("the texts' numbers are written with them: one format per language, however many numbers", async () => {
    const { default: i18n, i18nReady } = await import('./index');
    await i18nReady;
    const texts: string[] = [];
    const made = numberFormatsMade(() => {
      for (let i = 0; i < 50; i++) texts.push(i18n.t('no.such.key', { lng: 'pl', n: 1000 + i, defaultValue: '{{n}} desktops' }));
    });
    expect(made).toBeLessThanOrEqual(1);
    expect(texts[0]).toBe(`${new Intl.NumberFormat('pl').format(1000)} desktops`);
  });

  it('write as Intl does', () => {
    expect(numberFormat('de').format(1234.5)).toBe(new Intl.NumberFormat('de').format(1234.5));
    const at = new Date('2026-12-01T09:30:00Z');
    expect(dateTimeFormat('fr', { dateStyle: 'medium', timeZone: 'UTC' }).format(at)).toBe(new Intl.DateTimeFormat('fr', { dateStyle: 'medium', timeZone: 'UTC' }).format(at));
    expect(dateTimeFormat('fr', { dateStyle: 'medium', timeZone: 'UTC' })).toBe(dateTimeFormat('fr', { dateStyle: 'medium', timeZone: 'UTC' }));
  });
});
