import { Switch, Tabs, Text, TextInput, Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { languageCode, languageName, LANGUAGES, type TDisclaimerSetting, type TLanguageCode } from '@vdi/contracts';
import { OFFERED_LANGUAGES } from '../../../i18n';
import { PageHeader } from '../../../components/PageHeader';
import { SettingCard, SettingsBody, useSettingForm } from './SettingCard';
import { useSettingsLive } from './live';
import '../../../i18n/areas/admin-system';

/** A text for every language the interface offers (the five of the spec and the complete catalogues). */
const LANGS: TLanguageCode[] = OFFERED_LANGUAGES.map(languageCode);
const nameOf = (code: TLanguageCode) => languageName(LANGUAGES.find((l) => l.code === code)!.tag);
type Texts = Record<string, { title: string; body: string }>;

/**
 * The disclaimer shown after the password until accepted: on/off and a text per interface
 * language. English is also stored as the default `title`/`body` (what a language without its own
 * text shows, and what clients of one text read).
 */
export default function DisclaimerPage() {
  const { t } = useTranslation();
  useSettingsLive();
  const s = useSettingForm(
    'disclaimer',
    (v) => ({
      enabled: v.enabled,
      // The stored texts of languages not offered now (a catalogue not complete yet) are kept as they are.
      texts: {
        ...(v.texts as Texts),
        ...Object.fromEntries(
          LANGS.map((l) => [l, l === 'en' ? { title: v.texts.en?.title || v.title, body: v.texts.en?.body || v.body } : { title: v.texts[l]?.title ?? '', body: v.texts[l]?.body ?? '' }]),
        ),
      } as Texts,
    }),
    (v) => ({
      enabled: v.enabled,
      title: v.texts.en!.title,
      body: v.texts.en!.body,
      texts: Object.fromEntries(Object.entries(v.texts).filter(([, text]) => text.body.trim())) as TDisclaimerSetting['texts'],
    }),
  );
  return (
    <>
      <PageHeader title={t('admin_system.disclaimer.heading')} subtitle={t('admin_system.disclaimer.subheading')} />
      <SettingsBody>
        <SettingCard
          title={t('admin_system.disclaimer.title')}
          description={t('admin_system.disclaimer.description')}
          testId="disclaimer-card"
          onSave={s.save}
          busy={s.busy}
          dirty={s.dirty}
          error={s.error}
          query={s.query}
        >
          <Switch label={t('admin_system.disclaimer.enabled')} data-testid="disclaimer-enabled" {...s.form.getInputProps('enabled', { type: 'checkbox' })} />
          <Tabs defaultValue="en" keepMounted={false}>
            <Tabs.List>
              {LANGS.map((l) => (
                <Tabs.Tab key={l} value={l} data-testid={`disclaimer-tab-${l}`}>
                  {nameOf(l)}
                </Tabs.Tab>
              ))}
            </Tabs.List>
            {LANGS.map((l) => (
              <Tabs.Panel key={l} value={l} pt="md">
                {l !== 'en' && (
                  <Text size="xs" c="dimmed" mb="xs">
                    {t('admin_system.disclaimer.fallback_hint')}
                  </Text>
                )}
                <TextInput label={t('admin_system.disclaimer.text_title')} maxLength={200} mb="sm" data-testid={`disclaimer-title-${l}`} {...s.form.getInputProps(`texts.${l}.title`)} />
                <Textarea label={t('admin_system.disclaimer.text_body')} autosize minRows={6} maxLength={20000} data-testid={`disclaimer-body-${l}`} {...s.form.getInputProps(`texts.${l}.body`)} />
              </Tabs.Panel>
            ))}
          </Tabs>
        </SettingCard>
      </SettingsBody>
    </>
  );
}
