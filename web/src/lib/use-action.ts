import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from './errors';

/**
 * A form action with its busy flag and its error message (translated from the answer's
 * description_code, or by a screen's own mapping).
 */
export function useAction(toMessage?: (err: unknown) => string) {
  const { t, i18n } = useTranslation();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(
    async (fn: () => Promise<unknown>) => {
      setBusy(true);
      setError(null);
      try {
        await fn();
      } catch (err) {
        setError(toMessage ? toMessage(err) : errorMessage(t, err, (k) => i18n.exists(k)));
      } finally {
        setBusy(false);
      }
    },
    [t, i18n, toMessage],
  );
  return { busy, error, setError, run };
}
