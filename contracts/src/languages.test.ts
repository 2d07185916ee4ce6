import { describe, expect, it } from 'vitest';
import { INTERFACE_LANGUAGES, LANGUAGE_CODES, languageCode, languageCodeOf, toInterfaceLanguage, toLanguage } from './languages';

describe('languages (spec 001 §9)', () => {
  it('has the 12 catalogues of the spec, five of them offered always', () => {
    expect([...LANGUAGE_CODES].sort()).toEqual(['ca', 'de', 'en', 'eo', 'es', 'eu', 'fr', 'hi', 'ko', 'pl', 'ru', 'zh_Hans']);
    expect(INTERFACE_LANGUAGES).toEqual(['en-US', 'ca-ES', 'es-ES', 'eu-ES', 'fr-FR']);
  });

  it('reads a language however it is written', () => {
    expect(toLanguage('de')).toBe('de-DE');
    expect(toLanguage('DE_at')).toBe('de-DE');
    expect(toLanguage('pl-PL')).toBe('pl-PL');
    expect(toLanguage('zh_Hans')).toBe('zh-Hans');
    expect(toLanguage('zh-CN')).toBe('zh-Hans');
    expect(toLanguage('zh')).toBe('zh-Hans');
    expect(toLanguage('zh-Hant')).toBeNull();
    expect(toLanguage('zh-TW')).toBeNull();
    expect(toLanguage('eo')).toBe('eo');
    expect(toLanguage('xx')).toBeNull();
    expect(toLanguage('')).toBeNull();
    expect(toInterfaceLanguage('de-DE')).toBeNull();
    expect(toInterfaceLanguage('es')).toBe('es-ES');
  });

  it('stores the original’s codes', () => {
    expect(languageCode('zh-Hans')).toBe('zh_Hans');
    expect(languageCodeOf('zh-CN')).toBe('zh_Hans');
    expect(languageCodeOf('de-DE')).toBe('de');
    expect(languageCodeOf(null)).toBe('en');
    expect(languageCodeOf('ja')).toBe('en');
  });
});
