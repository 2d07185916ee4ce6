import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { builtInTextKey } from '@vdi/contracts';

/**
 * A name or description as the reader should see it: in their language while it is still exactly
 * the text the seed wrote (`BUILT_IN_TEXTS`, e.g. the demo's "Demo desktop"), else as typed. For
 * display only: a form's field keeps the stored value.
 */
export function builtInText(t: TFunction, text: string): string;
export function builtInText(t: TFunction, text: string | null | undefined): string | null | undefined;
export function builtInText(t: TFunction, text: string | null | undefined): string | null | undefined {
  const key = builtInTextKey(text);
  return key ? t(`built_in.${key}`, { defaultValue: text }) : text;
}

/** `builtInText` with the active language, re-rendered when it changes. */
export function useBuiltInText() {
  const { t } = useTranslation();
  return useCallback(
    ((text: string | null | undefined) => builtInText(t, text)) as {
      (text: string): string;
      (text: string | null | undefined): string | null | undefined;
    },
    [t],
  );
}
