import { describe, expect, it } from 'vitest';
import { messageKey } from './messages';

describe('live messages', () => {
  it('looks the text up in the bookings messages, then in the errors, else none', () => {
    const known = new Set(['bookings.messages.booking-end', 'errors.template_creation_failed']);
    const exists = (k: string) => known.has(k);
    expect(messageKey('booking-end', exists)).toBe('bookings.messages.booking-end');
    expect(messageKey('template_creation_failed', exists)).toBe('errors.template_creation_failed');
    expect(messageKey('unknown', exists)).toBeNull();
  });
});

describe('message templates', () => {
  it('fills {{params}} and leaves unknown ones', async () => {
    const { fillTemplate } = await import('./messages');
    expect(fillTemplate('{{name}} ends in {{ minutes }} min {{other}}', { name: 'GPU desktop', minutes: 5 })).toBe('GPU desktop ends in 5 min {{other}}');
  });
});
