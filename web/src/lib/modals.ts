import { useSyncExternalStore } from 'react';
import { randomId } from '@mantine/hooks';
import { modals as events } from '@mantine/modals';

/**
 * Mantine's `modals`, for a provider that loads with the first dialog (app/ModalsHost.tsx):
 * a dialog asked for before it listens is opened as soon as it does. Ids are made here, at once,
 * so that a caller can close what it opened.
 */
let state: 'idle' | 'loading' | 'ready' = 'idle';
const pending: Array<() => void> = [];
const listeners = new Set<() => void>();

function whenReady(fn: () => void) {
  if (state === 'ready') return fn();
  pending.push(fn);
  if (state === 'idle') {
    state = 'loading';
    listeners.forEach((l) => l());
  }
}

/** The provider listens: what waited goes to it. */
export function modalsReady() {
  state = 'ready';
  pending.splice(0).forEach((fn) => fn());
}

/** Whether the provider is wanted (a dialog was asked for). */
export const useModalsWanted = () =>
  useSyncExternalStore(
    (l) => (listeners.add(l), () => void listeners.delete(l)),
    () => state !== 'idle',
  );

export const modals = {
  open(payload: Parameters<typeof events.open>[0]): string {
    const modalId = payload.modalId ?? randomId();
    whenReady(() => events.open({ ...payload, modalId }));
    return modalId;
  },
  openConfirmModal(payload: Parameters<typeof events.openConfirmModal>[0]): string {
    const modalId = payload.modalId ?? randomId();
    whenReady(() => events.openConfirmModal({ ...payload, modalId }));
    return modalId;
  },
  close(id: string) {
    whenReady(() => events.close(id));
  },
};
