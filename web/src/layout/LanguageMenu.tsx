import { Button, Menu } from '@mantine/core';
import { IconCheck, IconLanguage } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { INTERFACE_LANGUAGES, toInterfaceLanguage, type TInterfaceLanguage } from '@vdi/contracts';
import { rememberLanguage } from '../i18n';
import { api } from '../lib/api';
import { session } from '../lib/session';
import { handleError, notifySuccess } from '../app/error-handler';
import { queryClient } from '../app/queries';

export const LANGUAGE_SAVE_TIMEOUT_MS = 25_000;

/** Changes the interface language at once; a signed-in user's choice is saved on the server too. */
export async function changeLanguage(i18nChange: (l: string) => Promise<unknown>, lang: TInterfaceLanguage, t: (k: string) => string) {
  rememberLanguage(lang);
  await i18nChange(lang);
  if (!session.token()) return;
  try {
    await api.put(`/user/language/${lang}`, {}, undefined, { timeoutMs: LANGUAGE_SAVE_TIMEOUT_MS });
    void queryClient.invalidateQueries({ queryKey: ['user'], exact: true });
    notifySuccess(t('session.language_saved'));
  } catch (err) {
    handleError(err);
  }
}

export function LanguageMenu({ variant = 'subtle' }: { variant?: 'subtle' | 'default' }) {
  const { t, i18n } = useTranslation();
  const current = toInterfaceLanguage(i18n.language) ?? 'en-US';
  return (
    <Menu position="bottom-end" shadow="md" width={180}>
      <Menu.Target>
        <Button variant={variant} color="gray" leftSection={<IconLanguage size={18} />} aria-label={t('nav.language')} data-testid="language-menu">
          {t(`languages.${current}`)}
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>{t('nav.language')}</Menu.Label>
        {INTERFACE_LANGUAGES.map((lang) => (
          <Menu.Item
            key={lang}
            lang={lang.slice(0, 2)}
            data-testid={`language-${lang}`}
            rightSection={lang === current ? <IconCheck size={16} /> : null}
            onClick={() => void changeLanguage((l) => i18n.changeLanguage(l), lang, t)}
          >
            {t(`languages.${lang}`)}
          </Menu.Item>
        ))}
      </Menu.Dropdown>
    </Menu>
  );
}
