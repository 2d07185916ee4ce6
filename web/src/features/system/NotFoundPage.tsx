import { Link, useLocation, useNavigate } from 'react-router';
import { Anchor, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { AuthCard } from '../../components/AuthCard';

export default function NotFoundPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { pathname } = useLocation();
  return (
    <AuthCard title={t('not_found.heading')}>
      <Stack align="center" gap="sm">
        <Title order={2} size={64} c="indigo" lh={1}>
          404
        </Title>
        <Text ta="center" c="dimmed" data-testid="not-found-text">
          {t('not_found.body', { path: pathname })}
        </Text>
        <Anchor
          component={Link}
          to="/"
          onClick={(e) => {
            if (window.history.length > 1) {
              e.preventDefault();
              void navigate(-1);
            }
          }}
          data-testid="not-found-back"
        >
          {t('not_found.go_back')}
        </Anchor>
      </Stack>
    </AuthCard>
  );
}
