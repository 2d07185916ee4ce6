import { Link, useNavigate, useParams } from 'react-router';
import { Button, Group, Stack, Text, ThemeIcon } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { AuthCard } from '../../components/AuthCard';

const KNOWN = ['401', '403', '404', '500'];

export default function ErrorPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { code = '500' } = useParams();
  return (
    <AuthCard title={t('error_page.heading', { code })}>
      <Stack align="center" gap="md">
        <ThemeIcon size={64} radius="xl" variant="light" color="red">
          <IconAlertTriangle size={34} />
        </ThemeIcon>
        <Text ta="center" data-testid="error-text">
          {t(KNOWN.includes(code) ? `error_page.${code}` : 'error_page.other')}
        </Text>
        <Group>
          <Button variant="default" onClick={() => void navigate(-1)}>
            {t('common.go_back')}
          </Button>
          <Button component={Link} to="/desktops">
            {t('error_page.go_home')}
          </Button>
        </Group>
      </Stack>
    </AuthCard>
  );
}
