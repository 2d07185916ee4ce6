import { MultiSelect } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { z } from 'zod';
import { ROLES, ZCategoryPublic, type TRole } from '@vdi/contracts';
import { api } from '../../../lib/api';
import { HANDLES_ERROR } from '../../../lib/queries';
import { builtInText } from '../../../lib/built-in-text';
import { SettingCard, useSettingForm } from './SettingCard';
import '../../../i18n/areas/admin-system';

const categoriesQuery = { queryKey: ['categories'], queryFn: () => api.get('/categories', z.array(ZCategoryPublic)), meta: HANDLES_ERROR } as const;

/** Two-factor sign-in required per role and per organisation (setting `two_factor`): people without it enrol at their next sign-in. */
export function TwoFactorSettingCard() {
  const { t } = useTranslation();
  const categories = useQuery(categoriesQuery);
  const s = useSettingForm(
    'two_factor',
    (v) => ({ required_roles: v.required_roles as string[], required_categories: v.required_categories }),
    (v) => ({ required_roles: v.required_roles as Exclude<TRole, never>[], required_categories: v.required_categories }),
  );
  return (
    <SettingCard
      title={t('admin_system.two_factor.title')}
      description={t('admin_system.two_factor.description')}
      testId="two-factor-setting-card"
      onSave={s.save}
      busy={s.busy}
      dirty={s.dirty}
      error={s.error}
      query={s.query}
    >
      <MultiSelect
        label={t('admin_system.two_factor.roles')}
        data={ROLES.map((r) => ({ value: r, label: t(`roles.${r}`) }))}
        clearable
        data-testid="two-factor-required-roles"
        {...s.form.getInputProps('required_roles')}
      />
      <MultiSelect
        label={t('admin_system.two_factor.categories')}
        data={(categories.data ?? []).map((c) => ({ value: c.id, label: builtInText(t, c.name) }))}
        searchable
        clearable
        data-testid="two-factor-required-categories"
        {...s.form.getInputProps('required_categories')}
      />
    </SettingCard>
  );
}
