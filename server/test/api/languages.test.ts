import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LANGUAGES, ZDisclaimer, ZMessageTemplate } from '@vdi/contracts';
import { emailChangeNotice, resetMail, verificationMail } from '../../src/mail/templates';
import { call, loginToken, startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const NEW_LANGUAGES = ['de', 'eo', 'ko', 'pl', 'ru', 'zh_Hans'] as const;
const placeholders = (s: string) => [...s.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]).sort();

describe('PUT /user/language/{lang}: every language with a catalogue (spec 001 §9)', () => {
  it('stores the code of the language however it is written', async () => {
    const token = await loginToken(server, 'student01');
    const cases: [string, string][] = [
      ['de', 'de'],
      ['de-DE', 'de'],
      ['de_AT', 'de'],
      ['pl-PL', 'pl'],
      ['eo', 'eo'],
      ['ko-KR', 'ko'],
      ['ru', 'ru'],
      ['zh_Hans', 'zh_Hans'],
      ['zh-CN', 'zh_Hans'],
      ['zh-Hans-SG', 'zh_Hans'],
      ['hi', 'hi'],
      ['ca-ES', 'ca'],
      ['en-US', 'en'],
    ];
    for (const [sent, stored] of cases) {
      const res = await call(server, `/api/v3/user/language/${sent}`, { token, method: 'PUT', body: {} });
      expect(res.status, sent).toBe(200);
      expect(await res.json()).toEqual({});
      expect((await (await call(server, '/api/v3/user', { token })).json()).lang, sent).toBe(stored);
    }
    for (const code of LANGUAGES.map((l) => l.code)) expect((await call(server, `/api/v3/user/language/${code}`, { token, method: 'PUT', body: {} })).status, code).toBe(200);
  });

  it('refuses a language without a catalogue (Traditional Chinese too) with invalid_language', async () => {
    const token = await loginToken(server, 'student02');
    for (const lang of ['xx', 'zh-TW', 'zh-Hant', 'ja', 'cs']) {
      const res = await call(server, `/api/v3/user/language/${lang}`, { token, method: 'PUT', body: {} });
      expect(res.status, lang).toBe(400);
      expect((await res.json()).description_code).toBe('invalid_language');
    }
  });
});

describe('the server speaks the user’s language', () => {
  it('answers the live messages in each new language, with the same placeholders as English', async () => {
    const token = await loginToken(server, 'student03');
    for (const name of ['booking-end', 'plan-end', 'template_creation_failed']) {
      const en = ZMessageTemplate.parse(await (await call(server, `/api/v3/message-template/${name}?lang=en`, { token })).json());
      for (const lang of NEW_LANGUAGES) {
        const got = ZMessageTemplate.parse(await (await call(server, `/api/v3/message-template/${name}?lang=${lang}`, { token })).json());
        expect(got.lang, `${name} ${lang}`).toBe(lang);
        expect(got.title, `${name} ${lang}`).not.toBe(en.title);
        expect(placeholders(got.body), `${name} ${lang}`).toEqual(placeholders(en.body));
      }
    }
    // Without ?lang, the stored language of the user (zh_Hans: not read as two letters).
    await call(server, '/api/v3/user/language/zh_Hans', { token, method: 'PUT', body: {} });
    expect((await (await call(server, '/api/v3/message-template/booking-end', { token })).json()).lang).toBe('zh_Hans');
    // hi is present and empty: English.
    expect((await (await call(server, '/api/v3/message-template/booking-end?lang=hi', { token })).json()).lang).toBe('en');
  });

  it('writes the mails in each new language', () => {
    const person = (lang: string | null) => ({ name: 'Ana', username: 'ana', lang });
    const en = verificationMail(person('en'), 'a@b.c', 'https://x/l');
    const subjects = new Set<string>([en.subject]);
    for (const lang of NEW_LANGUAGES) {
      const verify = verificationMail(person(lang), 'a@b.c', 'https://x/l');
      expect(verify.text, lang).toContain('https://x/l');
      expect(verify.text, lang).toContain('ana');
      subjects.add(verify.subject);
      expect(resetMail(person(lang), 'a@b.c', 'https://x/r').subject, lang).not.toBe(resetMail(person('en'), 'a@b.c', 'https://x/r').subject);
      expect(emailChangeNotice(person(lang), 'a@b.c', 'n@b.c').text, lang).toContain('n@b.c');
    }
    expect(subjects.size).toBe(NEW_LANGUAGES.length + 1);
    expect(verificationMail(person('de-DE'), 'a@b.c', 'l').subject).toBe(verificationMail(person('de'), 'a@b.c', 'l').subject);
    expect(verificationMail(person('hi'), 'a@b.c', 'l').subject).toBe(en.subject);
  });

  it('keeps a disclaimer text per new language', async () => {
    await server.ctx.settings.set('disclaimer', {
      enabled: true, title: 'Notice', body: 'Read me', texts: { de: { title: 'Hinweis', body: 'Bitte lesen' }, zh_Hans: { title: '须知', body: '请阅读' } },
    });
    expect(ZDisclaimer.parse(await (await call(server, '/api/v3/disclaimer?lang=de-DE')).json())).toEqual({ title: 'Hinweis', body: 'Bitte lesen' });
    expect(ZDisclaimer.parse(await (await call(server, '/api/v3/disclaimer?lang=zh-CN')).json())).toEqual({ title: '须知', body: '请阅读' });
    expect(ZDisclaimer.parse(await (await call(server, '/api/v3/disclaimer?lang=pl')).json())).toEqual({ title: 'Notice', body: 'Read me' });
    await server.ctx.settings.set('disclaimer', { enabled: false, title: '', body: '', texts: {} });
  });
});
