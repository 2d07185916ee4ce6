import { describe, expect, it } from 'vitest';
import { BUILT_IN_TEXTS, builtInTextKey } from '@vdi/contracts';
import i18n from '../i18n';
import de from '../i18n/locales/de.json';
import en from '../i18n/locales/en.json';
import zh from '../i18n/locales/zh.json';
import { builtInText } from './built-in-text';

describe('built-in names', () => {
  it('has each seeded text once, and in English the catalogue says it as the seed writes it', () => {
    const texts = Object.values(BUILT_IN_TEXTS);
    expect(new Set(texts).size).toBe(texts.length);
    expect(en.built_in).toEqual(BUILT_IN_TEXTS);
  });

  it('shows a text still exactly as seeded in the reader’s language', async () => {
    await i18n.changeLanguage('de-DE');
    const t = i18n.getFixedT('de-DE');
    expect(builtInText(t, 'Demo desktop')).toBe(de.built_in.demo_desktop);
    expect(builtInText(t, 'Demo desktop')).not.toBe('Demo desktop');
    expect(builtInText(t, 'Demo Linux')).toBe(de.built_in.demo_template);
    expect(builtInText(t, 'Default')).toBe(de.built_in.default_category);
  });

  it('shows another language’s text in that language', async () => {
    await i18n.changeLanguage('zh-Hans');
    const t = i18n.getFixedT('zh-Hans');
    expect(builtInText(t, 'Demo desktop')).toBe(zh.built_in.demo_desktop);
    expect(builtInText(t, 'Debian desktop (RDP)')).toBe(zh.built_in.rdp_template);
    await i18n.changeLanguage('en-US');
    expect(builtInText(i18n.getFixedT('en-US'), 'Demo desktop')).toBe('Demo desktop');
  });

  it('leaves a renamed item, a near match and an empty value as they are', async () => {
    await i18n.changeLanguage('de-DE');
    const t = i18n.getFixedT('de-DE');
    expect(builtInText(t, 'Demo desktop 2')).toBe('Demo desktop 2');
    expect(builtInText(t, 'demo desktop')).toBe('demo desktop');
    expect(builtInText(t, ' Demo desktop')).toBe(' Demo desktop');
    expect(builtInText(t, 'My lab')).toBe('My lab');
    expect(builtInText(t, '')).toBe('');
    expect(builtInText(t, null)).toBeNull();
    expect(builtInText(t, undefined)).toBeUndefined();
    expect(builtInTextKey('Demo desktop 2')).toBeUndefined();
    await i18n.changeLanguage('en-US');
  });
});
