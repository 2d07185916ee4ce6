import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { MantineProvider } from '@mantine/core';
import { SESSION_COOKIE } from '@vdi/contracts';
import i18n from '../i18n';
import de from '../i18n/locales/de.json';
import en from '../i18n/locales/en.json';
import pl from '../i18n/locales/pl.json';
import { LanguageMenu } from './LanguageMenu';

/** A login token the client can read (the server is stubbed: the signature is never checked). */
const b64 = (o: object) => btoa(JSON.stringify(o)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
const now = Math.floor(Date.now() / 1000);
const token = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ kid: 'isardvdi', type: 'login', iat: now, exp: now + 3600, session_id: 's', data: { user_id: 'u', role_id: 'user', category_id: 'default', group_id: 'g', name: 'U' } })}.sig`;

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  document.cookie = `${SESSION_COOKIE}=; max-age=0; path=/`;
});

describe('language menu', () => {
  it('offers the five interface languages, then the complete catalogues marked as community translations', async () => {
    await i18n.changeLanguage('en-US');
    render(<MantineProvider><LanguageMenu /></MantineProvider>);
    fireEvent.click(screen.getByTestId('language-menu'));
    expect(await screen.findByTestId('language-additional')).toHaveTextContent(en.nav.additional_languages);
    for (const tag of ['en-US', 'ca-ES', 'es-ES', 'eu-ES', 'fr-FR', 'de-DE', 'pl-PL']) expect(screen.getByTestId(`language-${tag}`)).toBeInTheDocument();
    expect(screen.getByTestId('language-de-DE')).toHaveTextContent('Deutsch');
    expect(screen.queryByTestId('language-hi-IN')).toBeNull();
  });

  it('switches to German, saves `de` on the server and shows the menu in German', async () => {
    await i18n.changeLanguage('en-US');
    document.cookie = `${SESSION_COOKIE}=${token}; path=/`;
    const fetch = vi.fn(async () => new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } }));
    vi.stubGlobal('fetch', fetch);
    render(<MantineProvider><LanguageMenu /></MantineProvider>);
    fireEvent.click(screen.getByTestId('language-menu'));
    fireEvent.click(await screen.findByTestId('language-de-DE'));
    await waitFor(() => expect(i18n.language).toBe('de-DE'));
    await waitFor(() => expect(fetch).toHaveBeenCalled());
    const calls = fetch.mock.calls as unknown as [string, RequestInit][];
    const put = calls.find(([url, init]) => String(url).endsWith('/api/v3/user/language/de') && init?.method === 'PUT');
    expect(put, JSON.stringify(calls.map((c) => c[0]))).toBeTruthy();
    expect(screen.getByTestId('language-menu')).toHaveTextContent('Deutsch');
    expect(i18n.t('nav.logout')).toBe(de.nav.logout);
    expect(i18n.t('desktops.count', { count: 1 })).toBe('1 Desktop');
  });

  it('speaks Polish with its plural forms', async () => {
    await i18n.changeLanguage('pl-PL');
    expect(i18n.t('nav.logout')).toBe(pl.nav.logout);
    expect(i18n.t('desktops.count', { count: 1 })).toBe('1 pulpit');
    expect(i18n.t('desktops.count', { count: 3 })).toBe('3 pulpity');
    expect(i18n.t('desktops.count', { count: 5 })).toBe('5 pulpitów');
    expect(i18n.t('desktops.count', { count: 22 })).toBe('22 pulpity');
    // Numbers as the language writes them.
    expect(i18n.t('desktops.memory_gb', { value: 1.5 })).toBe('1,5 GB RAM');
    await i18n.changeLanguage('de-DE');
    expect(i18n.t('desktops.count', { count: 1500 })).toBe('1.500 Desktops');
    await i18n.changeLanguage('en-US');
  });
});
