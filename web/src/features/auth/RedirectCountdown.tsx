import { useEffect, useState } from 'react';
import { useNavigate } from 'react-router';
import { Button, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';

/** After verification or a reset: 10 s to the sign-in page, or go at once (reference §7). */
export const REDIRECT_SECONDS = 10;

export function RedirectCountdown({ to = '/login' }: { to?: string }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [left, setLeft] = useState(REDIRECT_SECONDS);
  useEffect(() => {
    if (left <= 0) {
      void navigate(to, { replace: true });
      return;
    }
    const id = setTimeout(() => setLeft((s) => s - 1), 1000);
    return () => clearTimeout(id);
  }, [left, navigate, to]);
  return (
    <Stack gap="xs" align="center">
      <Text size="sm" c="dimmed" data-testid="redirect-countdown">
        {t('common.redirect_countdown', { count: left })}
      </Text>
      <Button variant="light" onClick={() => void navigate(to, { replace: true })}>
        {t('common.go_to_login')}
      </Button>
    </Stack>
  );
}
