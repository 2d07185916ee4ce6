import { useState } from 'react';
import { Alert, Anchor, Card, SimpleGrid, Stack, Tabs, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconBrandAndroid, IconBrandApple, IconBrandUbuntu, IconBrandWindows, IconDeviceMobile, IconExternalLink, IconInfoCircle, IconWorld } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/PageHeader';
import { configQuery } from '../../lib/queries';
import '../../i18n/areas/account';

export const VIEWER_OSES = ['linux', 'windows', 'android', 'ios', 'macos'] as const;
type Os = (typeof VIEWER_OSES)[number];
const ICONS = { linux: IconBrandUbuntu, windows: IconBrandWindows, android: IconBrandAndroid, ios: IconDeviceMobile, macos: IconBrandApple } as const;

/** The tab to open first: the visitor's own system. */
export function osOf(userAgent: string): Os {
  if (/android/i.test(userAgent)) return 'android';
  if (/iphone|ipad|ipod/i.test(userAgent)) return 'ios';
  if (/mac os x|macintosh/i.test(userAgent)) return 'macos';
  if (/windows/i.test(userAgent)) return 'windows';
  return 'linux';
}

/** The install guide of the native viewers per operating system (spec 001 §2); macOS is told to use the browser. */
export default function ViewersPage() {
  const { t } = useTranslation();
  const { data: config } = useQuery(configQuery);
  const [os, setOs] = useState<Os>(() => osOf(navigator.userAgent));
  return (
    <>
      <PageHeader title={t('account.viewers.heading')} subtitle={t('account.viewers.subheading')} />
      <Stack gap="lg" maw={900}>
        <Card withBorder padding="lg">
          <Title order={2} size="h4" mb={4}>
            <IconWorld size={18} style={{ verticalAlign: -3, marginRight: 6 }} />
            {t('account.viewers.browser_title')}
          </Title>
          <Text size="sm">{t('account.viewers.browser_body')}</Text>
          <Text size="sm" mt="xs" data-testid="viewers-rdp-browser">
            {t('account.viewers.rdp_browser')}
          </Text>
        </Card>
        <Tabs value={os} onChange={(v) => v && setOs(v as Os)} keepMounted={false}>
          <Tabs.List>
            {VIEWER_OSES.map((o) => {
              const Icon = ICONS[o];
              return (
                <Tabs.Tab key={o} value={o} leftSection={<Icon size={16} />} data-testid={`viewers-os-${o}`}>
                  {t(`account.viewers.os.${o}`)}
                </Tabs.Tab>
              );
            })}
          </Tabs.List>
          {VIEWER_OSES.map((o) => (
            <Tabs.Panel key={o} value={o} pt="md" data-testid={`viewers-panel-${o}`}>
              {o === 'macos' ? (
                <Alert color="orange" icon={<IconInfoCircle size={18} />}>
                  {t('account.viewers.macos')}
                </Alert>
              ) : (
                <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="lg">
                  <Card withBorder padding="lg">
                    <Title order={3} size="h5" mb={4}>
                      {t('account.viewers.spice_title')}
                    </Title>
                    <Text size="sm" c="dimmed" mb="xs">
                      {t('account.viewers.spice_body')}
                    </Text>
                    <Text size="sm">{t(`account.viewers.spice.${o}`)}</Text>
                  </Card>
                  <Card withBorder padding="lg">
                    <Title order={3} size="h5" mb={4}>
                      {t('account.viewers.rdp_title')}
                    </Title>
                    <Text size="sm" c="dimmed" mb="xs">
                      {t('account.viewers.rdp_body')}
                    </Text>
                    <Text size="sm">{t(`account.viewers.rdp.${o}`)}</Text>
                  </Card>
                  <Card withBorder padding="lg" style={{ gridColumn: '1 / -1' }} data-testid="viewers-rdp-gateway">
                    <Title order={3} size="h5" mb={4}>
                      {t('account.viewers.rdp_gateway_title')}
                    </Title>
                    <Text size="sm" c="dimmed" mb="xs">
                      {t('account.viewers.rdp_gateway_body')}
                    </Text>
                    <Text size="sm">{t(`account.viewers.rdp_gateway.${o}`)}</Text>
                  </Card>
                </SimpleGrid>
              )}
            </Tabs.Panel>
          ))}
        </Tabs>
        {config?.viewers_documentation_url && (
          <Anchor href={config.viewers_documentation_url} target="_blank" rel="noopener noreferrer" size="sm">
            {t('account.viewers.more')} <IconExternalLink size={14} style={{ verticalAlign: -2 }} />
          </Anchor>
        )}
      </Stack>
    </>
  );
}
