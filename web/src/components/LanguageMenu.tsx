import { Button, Menu, VisuallyHidden } from '@mantine/core';
import { IconCheck, IconLanguage } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { languageCode, languageName, type TLanguage } from '@vdi/contracts';
import i18n, { isAdditionalLanguage, OFFERED_LANGUAGES, rememberLanguage, saveLanguageChoice, toOfferedLanguage } from '../i18n';
import { api } from '../lib/api';
import { session } from '../lib/session';
import { handleError, notifySuccess } from '../lib/error-handler';
import { queryClient } from '../lib/queries';

export const LANGUAGE_SAVE_TIMEOUT_MS = 25_000;

/** Changes the interface language at once; a signed-in user's choice is saved on the server too. */
export async function changeLanguage(lang: TLanguage) {
  rememberLanguage(lang);
  await i18n.changeLanguage(lang);
  if (!session.token()) return;
  try {
    // Saved by its code, as the original names its catalogues (`de`, `zh_Hans`).
    const code = languageCode(lang);
    await saveLanguageChoice(code, () => api.put(`/user/language/${code}`, {}, undefined, { timeoutMs: LANGUAGE_SAVE_TIMEOUT_MS }));
    void queryClient.invalidateQueries({ queryKey: ['user'], exact: true });
    // In the language just chosen.
    notifySuccess(i18n.t('session.language_saved'));
  } catch (err) {
    handleError(err);
  }
}

/** The offered languages for a select: the interface's, then the additional ones under their label. */
export function languageChoices(additionalLabel: string) {
  const own = (l: TLanguage) => ({ value: l, label: languageName(l) });
  const additional = OFFERED_LANGUAGES.filter(isAdditionalLanguage);
  return [
    ...OFFERED_LANGUAGES.filter((l) => !isAdditionalLanguage(l)).map(own),
    ...(additional.length ? [{ group: additionalLabel, items: additional.map(own) }] : []),
  ];
}

export function LanguageMenu({ variant = 'subtle', testId = 'language-menu' }: { variant?: 'subtle' | 'default'; testId?: string }) {
  const { t, i18n: instance } = useTranslation();
  const current = toOfferedLanguage(instance.language) ?? 'en-US';
  const item = (lang: TLanguage) => (
    <Menu.Item
      key={lang}
      lang={lang}
      data-testid={`${testId === 'language-menu' ? 'language' : testId}-${lang}`}
      rightSection={lang === current ? <IconCheck size={16} /> : null}
      onClick={() => void changeLanguage(lang)}
    >
      {languageName(lang)}
    </Menu.Item>
  );
  const additional = OFFERED_LANGUAGES.filter(isAdditionalLanguage);
  return (
    <Menu position="bottom-end" shadow="md" width={220}>
      <Menu.Target>
        <Button variant={variant} color="gray" leftSection={<IconLanguage size={18} />} data-testid={testId}>
          {/* The name a screen reader says starts with what is seen (WCAG 2.5.3), then what the menu is for. */}
          {languageName(current)}
          <VisuallyHidden>{` — ${t('nav.language')}`}</VisuallyHidden>
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>{t('nav.language')}</Menu.Label>
        {OFFERED_LANGUAGES.filter((l) => !isAdditionalLanguage(l)).map(item)}
        {additional.length > 0 && (
          <>
            <Menu.Divider />
            {/* The other complete catalogues, marked as such. */}
            <Menu.Label data-testid="language-additional">{t('nav.additional_languages')}</Menu.Label>
            {additional.map(item)}
          </>
        )}
      </Menu.Dropdown>
    </Menu>
  );
}
