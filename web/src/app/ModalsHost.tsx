import { useEffect } from 'react';
import { ModalsProvider } from '@mantine/modals';
import { modalsReady } from '../lib/modals';

/** Mantine's dialogs, loaded with the first one (lib/modals.ts). */
export default function ModalsHost() {
  // Runs after the provider's own effects: it listens by then.
  useEffect(() => modalsReady(), []);
  return <ModalsProvider>{null}</ModalsProvider>;
}
