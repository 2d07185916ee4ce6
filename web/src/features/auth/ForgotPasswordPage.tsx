import { useState } from 'react';
import { Link } from 'react-router';
import { Alert, Anchor, Button, Select, Stack, TextInput } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconMailCheck } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { AUTH, request } from '../../lib/api';
import { useAction } from '../../lib/use-action';
import { rules } from '../../lib/validation';
import { AuthCard } from '../../components/AuthCard';
import { categoriesQuery, loginConfigQuery } from './api';

export default function ForgotPasswordPage() {
  const { t } = useTranslation();
  const categories = useQuery(categoriesQuery);
  // Said before the form is filled: without mail (or the public address its link needs) no link can be sent.
  const mailOff = useQuery(loginConfigQuery).data?.providers.form.hide_forgot_password === true;
  const [sent, setSent] = useState(false);
  const { busy, error, run } = useAction();
  const r = rules(t);
  const form = useForm({ initialValues: { category: 'default', email: '' }, validate: { email: r.all(r.required, r.email) } });

  return (
    <AuthCard title={t('forgot_password.heading')} subtitle={t('forgot_password.subheading')}>
      {sent ? (
        <Stack>
          <Alert color="teal" icon={<IconMailCheck size={18} />} data-testid="forgot-sent">
            {t('forgot_password.sent')}
          </Alert>
          <Anchor component={Link} to="/login" ta="center" size="sm">
            {t('forgot_password.back_to_login')}
          </Anchor>
        </Stack>
      ) : (
        <form
          noValidate
          onSubmit={form.onSubmit((v) =>
            run(async () => {
              await request(`${AUTH}/forgot-password`, { method: 'POST', body: { category_id: v.category, email: v.email.trim() }, bearer: null });
              setSent(true);
            }),
          )}
        >
          <Stack>
            {mailOff && (
              <Alert color="orange" icon={<IconAlertCircle size={18} />} data-testid="forgot-mail-off">
                {t('errors.email_not_configured')}
              </Alert>
            )}
            {error && <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert">{error}</Alert>}
            {(categories.data?.length ?? 0) > 1 && (
              <Select label={t('login.category')} data={categories.data!.map((c) => ({ value: c.id, label: c.name }))} allowDeselect={false} {...form.getInputProps('category')} />
            )}
            <TextInput label={t('forgot_password.email')} type="email" autoComplete="email" disabled={mailOff} {...form.getInputProps('email')} />
            <Button type="submit" loading={busy} disabled={mailOff}>
              {t('forgot_password.submit')}
            </Button>
            <Anchor component={Link} to="/login" ta="center" size="sm">
              {t('forgot_password.back_to_login')}
            </Anchor>
          </Stack>
        </form>
      )}
    </AuthCard>
  );
}
