import { Button, Menu, VisuallyHidden } from '@mantine/core';
import { IconCheck, IconLanguage } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { INTERFACE_LANGUAGES, toInterfaceLanguage, type TInterfaceLanguage } from '@vdi/contracts';
import i18n, { rememberLanguage } from '../i18n';
import { api } from '../lib/api';
import { session } from '../lib/session';
import { handleError, notifySuccess } from '../app/error-handler';
import { queryClient } from '../app/queries';

export const LANGUAGE_SAVE_TIMEOUT_MS = 25_000;

/** Changes the interface language at once; a signed-in user's choice is saved on the server too. */
export async function changeLanguage(lang: TInterfaceLanguage) {
  rememberLanguage(lang);
  await i18n.changeLanguage(lang);
  if (!session.token()) return;
  try {
    await api.put(`/user/language/${lang}`, {}, undefined, { timeoutMs: LANGUAGE_SAVE_TIMEOUT_MS });
    void queryClient.invalidateQueries({ queryKey: ['user'], exact: true });
    // In the language just chosen.
    notifySuccess(i18n.t('session.language_saved'));
  } catch (err) {
    handleError(err);
  }
}

export function LanguageMenu({ variant = 'subtle', testId = 'language-menu' }: { variant?: 'subtle' | 'default'; testId?: string }) {
  const { t, i18n: instance } = useTranslation();
  const current = toInterfaceLanguage(instance.language) ?? 'en-US';
  return (
    <Menu position="bottom-end" shadow="md" width={180}>
      <Menu.Target>
        <Button variant={variant} color="gray" leftSection={<IconLanguage size={18} />} data-testid={testId}>
          {/* The name a screen reader says starts with what is seen (WCAG 2.5.3), then what the menu is for. */}
          {t(`languages.${current}`)}
          <VisuallyHidden>{` — ${t('nav.language')}`}</VisuallyHidden>
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>{t('nav.language')}</Menu.Label>
        {INTERFACE_LANGUAGES.map((lang) => (
          <Menu.Item
            key={lang}
            lang={lang.slice(0, 2)}
            data-testid={`${testId === 'language-menu' ? 'language' : testId}-${lang}`}
            rightSection={lang === current ? <IconCheck size={16} /> : null}
            onClick={() => void changeLanguage(lang)}
          >
            {t(`languages.${lang}`)}
          </Menu.Item>
        ))}
      </Menu.Dropdown>
    </Menu>
  );
}
