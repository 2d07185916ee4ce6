import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, render, screen } from '@testing-library/react';
import { MantineProvider } from '@mantine/core';
import i18n from '../../i18n';
import { secondsUntil, StateBadge } from './StateBadge';

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

describe('shutting down, with the time left before the forced stop', () => {
  it('counts down each second from the server moment, then says the stop is forced', async () => {
    await i18n.changeLanguage('en-US');
    vi.useFakeTimers({ now: new Date('2026-01-01T10:00:00Z'), toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'Date'] });
    render(<MantineProvider><StateBadge status="Shutting-down" forceStopAt="2026-01-01T10:00:03Z" /></MantineProvider>);
    const timer = screen.getByTestId('force-stop-countdown');
    expect(timer).toHaveAttribute('role', 'timer');
    expect(timer).toHaveTextContent('Forced stop in 3 seconds');
    await act(async () => void vi.advanceTimersByTime(1000));
    expect(timer).toHaveTextContent('Forced stop in 2 seconds');
    await act(async () => void vi.advanceTimersByTime(1000));
    expect(timer).toHaveTextContent('Forced stop in 1 second');
    await act(async () => void vi.advanceTimersByTime(1000));
    expect(timer).toHaveTextContent('Forcing the stop…');
  });

  it('speaks the plural forms of each language', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T10:00:00Z'), toFake: ['Date'] });
    await i18n.changeLanguage('pl-PL');
    render(<MantineProvider><StateBadge status="Shutting-down" forceStopAt="2026-01-01T10:00:05Z" /></MantineProvider>);
    expect(screen.getByTestId('force-stop-countdown')).toHaveTextContent('Wymuszone zatrzymanie za 5 sekund');
    cleanup();
    await i18n.changeLanguage('zh-Hans');
    render(<MantineProvider><StateBadge status="Shutting-down" forceStopAt="2026-01-01T10:00:05Z" /></MantineProvider>);
    expect(screen.getByTestId('force-stop-countdown')).toHaveTextContent('5 秒后强制停止');
    await i18n.changeLanguage('en-US');
  });

  it('shows no countdown in other states, or without the moment', () => {
    render(<MantineProvider><StateBadge status="Started" forceStopAt="2026-01-01T10:00:05Z" /><StateBadge status="Shutting-down" forceStopAt={null} /></MantineProvider>);
    expect(screen.queryByTestId('force-stop-countdown')).toBeNull();
    expect(secondsUntil('2026-01-01T10:00:00Z', Date.parse('2026-01-01T10:00:09.5Z'))).toBe(0);
    expect(secondsUntil('2026-01-01T10:00:10Z', Date.parse('2026-01-01T10:00:08.5Z'))).toBe(2);
  });
});
