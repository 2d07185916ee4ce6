import { describe, expect, it } from 'vitest';
import { disclaimerIn } from './disclaimer';

describe('disclaimer text', () => {
  it('reads one text, per-language maps, and per-language texts, in the asked language or English', () => {
    expect(disclaimerIn({ enabled: true, title: 'T', body: 'B' }, 'es')).toEqual({ enabled: true, title: 'T', body: 'B' });
    expect(disclaimerIn({ enabled: true, title: { en: 'Notice', es: 'Aviso' }, body: { en: 'Body', es: 'Texto' } }, 'es-ES')).toEqual({ enabled: true, title: 'Aviso', body: 'Texto' });
    expect(disclaimerIn({ enabled: true, texts: { en: { title: 'Notice', body: 'Body' }, ca: { title: 'Avís', body: 'Text' } } }, 'ca')).toMatchObject({ title: 'Avís' });
    expect(disclaimerIn({ enabled: false, en: { title: 'Notice', body: 'Body' }, 'fr-FR': { title: 'Avis', body: 'Texte' } }, 'fr')).toEqual({ enabled: false, title: 'Avis', body: 'Texte' });
    expect(disclaimerIn({ enabled: true, en: { title: 'Notice', body: 'Body' } }, 'eu')).toMatchObject({ title: 'Notice' });
    expect(disclaimerIn(null, 'en')).toEqual({ enabled: false, title: '', body: '' });
  });
});
