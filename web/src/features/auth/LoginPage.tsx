import { useEffect, useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { Alert, Anchor, Button, Group, PasswordInput, Select, Stack, Text, TextInput, UnstyledButton, Paper, Avatar } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconArrowLeft, IconBuilding, IconChevronRight, IconInfoCircle } from '@tabler/icons-react';
import dayjs from 'dayjs';
import { useTranslation } from 'react-i18next';
import type { TCategoryChoice } from '@vdi/contracts';
import { HttpError } from '../../lib/api';
import { errorMessage } from '../../lib/errors';
import { session } from '../../lib/session';
import { readToken, typeOf } from '../../lib/token';
import { rules, LOCAL_DATE_TIME } from '../../lib/validation';
import { SIGNED_IN_HOME, SIGNED_IN_STATE, STEP_ROUTES } from '../../lib/sign-in-steps';
import { queryClient } from '../../lib/queries';
import { AuthCard } from '../../components/AuthCard';
import { categoriesQuery, categoryByUrlQuery, IDP_LOGOUT_KEY, login, loginConfigQuery, providerSignInUrl, signInChoices, stepTokenOf } from './api';
import { builtInText } from '../../lib/built-in-text';

/** The spec's sign-in messages: 401, 429 with when to retry (a time today, else a date), 403 disabled, 500. */
function loginError(t: ReturnType<typeof useTranslation>['t'], exists: (k: string) => boolean, err: unknown): string {
  if (!(err instanceof HttpError)) return t('login.server_error');
  switch (err.status) {
    case 401:
      return t('login.wrong_credentials');
    case 429: {
      const at = (err.body.params?.retry_after as string | undefined) ?? err.headers.get('retry-after') ?? undefined;
      const when = at ? dayjs(at) : dayjs().add(1, 'minute');
      return when.isSame(dayjs(), 'day')
        ? t('login.too_many_today', { time: when.format('HH:mm') })
        : t('login.too_many_later', { date: when.format(LOCAL_DATE_TIME) });
    }
    case 403:
      return err.code === 'user_disabled' ? t('login.user_disabled') : errorMessage(t, err, exists);
    case 500:
      return t('login.server_error');
    default:
      return errorMessage(t, err, exists);
  }
}

export default function LoginPage() {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const categories = useQuery(categoriesQuery);
  const config = useQuery(loginConfigQuery);
  // A sign-in through a provider that came back refused or failed: its code in the address.
  const [params] = useSearchParams();
  const backWith = params.get('error');
  const [error, setError] = useState<string | null>(() =>
    backWith ? t(i18n.exists(`errors.${backWith}`) ? `errors.${backWith}` : 'errors.identity_sign_in_failed') : null,
  );
  // After a sign-out of a session a provider opened: its own sign-out, offered once.
  const [idpLogout, setIdpLogout] = useState(() => sessionStorage.getItem(IDP_LOGOUT_KEY));
  const [busy, setBusy] = useState(false);
  const [choices, setChoices] = useState<TCategoryChoice[] | null>(() => readToken(stepTokenOf('category-select'))?.categories ?? null);

  // 9. Someone already signed in has nothing to do here.
  useEffect(() => {
    const claims = session.claims();
    if (claims && typeOf(claims) === 'login' && claims.exp * 1000 > Date.now()) void navigate('/', { replace: true });
  }, [navigate]);

  const form = useForm({
    initialValues: { category: 'default', username: '', password: '' },
    validate: { username: rules(t).required, password: rules(t).required },
  });

  // A category's own login address (/login/{provider}/{custom_url}) signs in to that category only.
  const { category: customUrl } = useParams();
  const byUrl = useQuery(categoryByUrlQuery(customUrl));
  useEffect(() => {
    if (byUrl.data) form.setFieldValue('category', byUrl.data.id);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- set once per category found by its address; the form object is new every render
  }, [byUrl.data]);
  const multipleCategories = (categories.data?.length ?? 0) > 1 && !byUrl.data && config.data?.categories_select !== false;
  const notice = config.data?.notification_cover;
  const { form: showForm } = signInChoices(config.data?.providers.all.display_providers);
  useEffect(() => {
    const first = categories.data?.[0];
    if (customUrl) return;
    if (first && !categories.data!.some((c) => c.id === form.values.category)) form.setFieldValue('category', first.id);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- a default when the categories arrive, not again as the person chooses one
  }, [categories.data]);

  // The providers of the organisation chosen (or of the custom address), and those for every organisation.
  const chosenCategory = byUrl.data?.id ?? (multipleCategories ? form.values.category : undefined);
  const providerButtons = (config.data?.identity_providers ?? []).filter((p) => !p.category_id || !chosenCategory || p.category_id === chosenCategory);

  const after = async (type: Awaited<ReturnType<typeof login>>) => {
    if (type === 'login') {
      queryClient.clear();
      await navigate(SIGNED_IN_HOME, { replace: true, state: SIGNED_IN_STATE });
    } else if (type === 'category-select') {
      setChoices(readToken(session.stepToken())?.categories ?? []);
    } else {
      await navigate(STEP_ROUTES[type] ?? '/login');
    }
  };

  const run = async (fn: () => Promise<Awaited<ReturnType<typeof login>>>) => {
    setBusy(true);
    setError(null);
    try {
      await after(await fn());
    } catch (err) {
      setError(loginError(t, (k) => i18n.exists(k), err));
    } finally {
      setBusy(false);
    }
  };

  const submit = form.onSubmit((v) =>
    run(() =>
      login({
        username: v.username.trim(),
        password: v.password,
        categoryId: byUrl.data
          ? byUrl.data.id
          : categories.data && categories.data.length > 0 && config.data?.categories_select !== false
            ? v.category
            : undefined,
      }),
    ),
  );

  if (choices) {
    return (
      <AuthCard title={t('login.choose_category')} subtitle={t('login.choose_category_hint')}>
        <Stack gap="sm">
          {error && <Alert color="red" icon={<IconAlertCircle size={18} />}>{error}</Alert>}
          {choices.map((c) => (
            <UnstyledButton
              key={c.id}
              disabled={busy}
              onClick={() => run(() => login({ categoryId: c.id, bearer: session.stepToken() }))}
              data-testid={`category-choice-${c.id}`}
            >
              <Paper withBorder p="sm" radius="md">
                <Group justify="space-between">
                  <Group gap="sm">
                    <Avatar src={c.photo || null} radius="md" color="indigo">
                      <IconBuilding size={18} />
                    </Avatar>
                    <Text fw={500}>{builtInText(t, c.name)}</Text>
                  </Group>
                  <IconChevronRight size={18} />
                </Group>
              </Paper>
            </UnstyledButton>
          ))}
          <Button
            variant="subtle"
            leftSection={<IconArrowLeft size={16} />}
            onClick={() => {
              session.clear();
              setChoices(null);
            }}
          >
            {t('common.back')}
          </Button>
        </Stack>
      </AuthCard>
    );
  }

  return (
    <AuthCard title={t('login.heading')} subtitle={byUrl.data ? builtInText(t, byUrl.data.name) : t('login.subheading')}>
      <form onSubmit={submit} noValidate>
        <Stack gap="md">
          {notice?.enabled && (notice.title || notice.description) && (
            <Alert color="blue" icon={<IconInfoCircle size={18} />} title={notice.title || undefined} data-testid="login-notice">
              <Text size="sm" style={{ whiteSpace: 'pre-line' }}>
                {notice.description}
              </Text>
            </Alert>
          )}
          {error && (
            <Alert color="red" icon={<IconAlertCircle size={18} />} data-testid="login-error" role="alert">
              {error}
            </Alert>
          )}
          {idpLogout && (
            <Alert color="blue" icon={<IconInfoCircle size={18} />} data-testid="login-idp-logout">
              <Text size="sm">{t('login.idp_still_signed_in')}</Text>
              <Anchor
                size="sm"
                href={idpLogout}
                onClick={() => {
                  sessionStorage.removeItem(IDP_LOGOUT_KEY);
                  setIdpLogout(null);
                }}
              >
                {t('login.idp_sign_out')}
              </Anchor>
            </Alert>
          )}
          {(showForm || providerButtons.length > 0) && multipleCategories && (
            <Select
              label={t('login.category')}
              data={categories.data!.map((c) => ({ value: c.id, label: builtInText(t, c.name) }))}
              allowDeselect={false}
              leftSection={<IconBuilding size={16} />}
              data-testid="login-category"
              {...form.getInputProps('category')}
            />
          )}
          {showForm && (
            <>
              <TextInput label={t('login.username')} autoComplete="username" autoFocus data-testid="login-username" {...form.getInputProps('username')} />
              <PasswordInput label={t('login.password')} autoComplete="current-password" data-testid="login-password" {...form.getInputProps('password')} />
              {config.data && !config.data.providers.form.hide_forgot_password && (
                <Anchor component={Link} to="/forgot-password" size="sm" ta="right" mt={-8}>
                  {t('login.forgot')}
                </Anchor>
              )}
              <Button type="submit" fullWidth size="md" loading={busy} data-testid="login-submit">
                {t('login.submit')}
              </Button>
            </>
          )}
          {providerButtons.length > 0 && (
            <Stack gap="xs">
              {showForm && (
                <Text size="xs" c="dimmed" ta="center">
                  {t('login.other_providers')}
                </Text>
              )}
              {providerButtons.map((p) => (
                <Button
                  key={p.id}
                  variant="default"
                  size="md"
                  component="a"
                  href={providerSignInUrl(p, chosenCategory)}
                  leftSection={p.logo ? <img src={p.logo} alt="" width={20} height={20} style={{ objectFit: 'contain' }} /> : <IconBuilding size={18} />}
                  data-testid={`login-provider-${p.id}`}
                  // A long name in a long language wraps instead of being cut (a phone's width).
                  h="auto"
                  mih={42}
                  py={6}
                  styles={{ root: { display: 'flex', alignItems: 'center', justifyContent: 'center' }, label: { whiteSpace: 'normal', textAlign: 'center', lineHeight: 1.3 }, inner: { whiteSpace: 'normal', height: 'auto' } }}
                >
                  {t('login.sign_in_with', { name: p.name })}
                </Button>
              ))}
            </Stack>
          )}
          {config.data?.signup && (
            <Text size="sm" ta="center" c="dimmed">
              {t('login.signup_prompt')}{' '}
              <Anchor component={Link} to="/register">
                {t('login.signup')}
              </Anchor>
            </Text>
          )}
        </Stack>
      </form>
    </AuthCard>
  );
}
