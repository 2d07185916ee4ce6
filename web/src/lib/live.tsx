import { useEffect, useRef, useSyncExternalStore } from 'react';
import { VisuallyHidden } from '@mantine/core';
import { useNotifications } from '@mantine/notifications';

/**
 * Live regions, present from the first render (a region added together with its text is not
 * read by every screen reader): what changes without the person asking — notifications, a
 * desktop's new state — is said here. `announce` is the one way in.
 */
type Said = { polite: string; assertive: string };
let said: Said = { polite: '', assertive: '' };
const listeners = new Set<() => void>();

/** Words stay in a region this long: long enough to be read, not as a copy of a notice that has gone. */
export const ANNOUNCED_MS = 5_000;
const clearing: Partial<Record<keyof Said, ReturnType<typeof setTimeout>>> = {};

export function announce(text: string, urgency: 'polite' | 'assertive' = 'polite') {
  // The same words twice are said twice: the region empties first.
  said = { ...said, [urgency]: '' };
  listeners.forEach((l) => l());
  queueMicrotask(() => {
    said = { ...said, [urgency]: text };
    listeners.forEach((l) => l());
    // Emptying a region is not read out; the page no longer holds old words.
    clearTimeout(clearing[urgency]);
    clearing[urgency] = setTimeout(() => {
      if (said[urgency] !== text) return;
      said = { ...said, [urgency]: '' };
      listeners.forEach((l) => l());
    }, ANNOUNCED_MS);
  });
}

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};

const textOf = (node: unknown): string => (typeof node === 'string' || typeof node === 'number' ? String(node) : '');

export function LiveRegions() {
  const now = useSyncExternalStore(subscribe, () => said);
  // Every notification is said once, errors (red) at once, the rest politely.
  const { notifications } = useNotifications();
  const seen = useRef(new Set<string>());
  useEffect(() => {
    for (const n of notifications) {
      const id = String(n.id);
      if (seen.current.has(id)) continue;
      seen.current.add(id);
      const text = [textOf(n.title), textOf(n.message)].filter(Boolean).join('. ');
      if (text) announce(text, n.color === 'red' ? 'assertive' : 'polite');
    }
  }, [notifications]);
  return (
    <VisuallyHidden>
      <div role="status" aria-live="polite" aria-atomic="true" data-testid="live-polite">
        {now.polite}
      </div>
      <div aria-live="assertive" aria-atomic="true" data-testid="live-assertive">
        {now.assertive}
      </div>
    </VisuallyHidden>
  );
}
