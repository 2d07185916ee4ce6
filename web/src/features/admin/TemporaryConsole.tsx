// TEMPORARY (branch admin-system only): mounts the console's sections at /isard-admin/<path> until
// the people part's shell (its layout and navigation) is merged; then this file and its row in
// app/routes.ts go.
import { lazy, Suspense, useMemo } from 'react';
import { NavLink as RouterLink, useParams } from 'react-router';
import { Group, NavLink, Skeleton } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { userQuery } from '../../app/queries';
import { adminSections } from './sections';

export default function TemporaryConsole() {
  const { t } = useTranslation();
  const path = useParams()['*'] ?? '';
  const { data: user } = useQuery(userQuery);
  const visible = adminSections.filter((s) => user?.role === 'admin' || (user && (s.roles as readonly string[]).includes(user.role)));
  const section = visible.find((s) => s.path === path) ?? visible[0];
  const Screen = useMemo(() => (section ? lazy(section.load) : null), [section]);
  return (
    <>
      <Group gap={4} mb="lg" wrap="wrap">
        {visible.map((s) => (
          <NavLink key={s.path} component={RouterLink} end to={`/isard-admin/${s.path}`} label={t(s.label)} active={s === section} w="auto" style={{ borderRadius: 8 }} data-testid={`admin-nav-${s.path.replace('/', '-')}`} />
        ))}
      </Group>
      <Suspense fallback={<Skeleton height={300} />}>{Screen && <Screen />}</Suspense>
    </>
  );
}
