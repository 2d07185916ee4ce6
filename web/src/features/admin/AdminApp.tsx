import { lazy, Suspense, useEffect, useMemo, useState, type ComponentType, type LazyExoticComponent } from 'react';
import { Navigate, NavLink as RouterLink, Route, Routes, useLocation } from 'react-router';
import { AppShell, Badge, Burger, Center, Divider, Group, Loader, NavLink, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconArrowLeft, IconLogout, IconSettings, IconShieldLock } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { userQuery } from '../../lib/queries';
import { logout } from '../../lib/session-actions';
import { Brand } from '../../components/Brand';
import { ColorSchemeToggle } from '../../components/ColorSchemeToggle';
import { LanguageMenu } from '../../components/LanguageMenu';
import { NavigationDrawer, usePhoneNavigation } from '../../components/PhoneNavigation';
import { EmptyState } from '../../components/EmptyState';
import { adminSections, type AdminSection } from './sections';
import { ADMIN_GROUPS, type AdminGroup } from './section';
import classes from './AdminApp.module.css';
import '../../i18n/areas/admin';


/** Each section's screen, made lazy once: it downloads when first opened. */
const screens = new Map<string, LazyExoticComponent<ComponentType>>();
const screenOf = (s: Pick<AdminSection, 'path' | 'load'>) => {
  if (!screens.has(s.path)) screens.set(s.path, lazy(s.load));
  return screens.get(s.path)!;
};
/** A section's pages below it (`desktops/:id`), each lazy once. */
const pagesOf = (s: AdminSection) => (s.pages ?? []).map((p) => ({ path: `${s.path}/${p.path}`, Screen: screenOf({ path: `${s.path}/${p.path}`, load: p.load }) }));

/** The navigation's groups a person closed (kept in this browser). */
const CLOSED_GROUPS_KEY = 'vdi.adminNav.closed';
function storedClosedGroups(): string[] {
  try {
    const v: unknown = JSON.parse(localStorage.getItem(CLOSED_GROUPS_KEY) ?? '[]');
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

function SectionLoader() {
  return (
    <Center py="xl">
      <Loader />
    </Center>
  );
}

const NONE: AdminSection[] = [];

/** The sections a role sees: admins all, managers those that list them. */
export const sectionsFor = (role: string | undefined, all: AdminSection[] = adminSections) =>
  role === 'admin' ? all : all.filter((s) => role === 'manager' && s.roles.includes('manager'));

/**
 * /isard-admin/*: the administration console, with its own navigation and a way back to the portal. `more`: sections
 * whose screens other features make (app/AdminConsole.tsx wires them in: a feature imports no other feature).
 */
export default function AdminApp({ more = NONE }: { more?: AdminSection[] }) {
  const { t } = useTranslation();
  const [opened, { toggle, close }] = useDisclosure(false);
  const { data: user } = useQuery(userQuery);
  const sections = useMemo(() => sectionsFor(user?.role, [...adminSections, ...more].sort((a, b) => a.order - b.order)), [user?.role, more]);
  const phone = usePhoneNavigation();
  // Each section names the browser's tab: "VDI Portal · Users · Administration".
  const { pathname } = useLocation();
  const current = sections
    .filter((s) => pathname === `/isard-admin/${s.path}` || pathname.startsWith(`/isard-admin/${s.path}/`))
    .sort((a, b) => b.path.length - a.path.length)[0];
  const title = current ? t(current.label) : null;
  useEffect(() => {
    if (title) document.title = `${t('app.title')} · ${title} · ${t('admin.shell.title')}`;
  }, [title, t]);

  const link = (s: AdminSection) => {
    const Icon = s.icon;
    return (
      <NavLink
        key={s.path}
        component={RouterLink}
        to={`/isard-admin/${s.path}`}
        label={t(s.label)}
        leftSection={<Icon size={18} stroke={1.8} />}
        className={classes.link}
        onClick={close}
        data-testid={`admin-nav-${s.path.replaceAll('/', '-')}`}
      />
    );
  };
  // Sections without a group first (the dashboard), then each group, collapsible; the current section's stays open.
  const [closedGroups, setClosedGroups] = useState<string[]>(() => storedClosedGroups());
  const toggleGroup = (g: AdminGroup) =>
    setClosedGroups((was) => {
      const next = was.includes(g) ? was.filter((x) => x !== g) : [...was, g];
      localStorage.setItem(CLOSED_GROUPS_KEY, JSON.stringify(next));
      return next;
    });
  const links = [
    ...sections.filter((s) => !s.group).map(link),
    ...ADMIN_GROUPS.map((g) => {
      const inGroup = sections.filter((s) => s.group === g);
      if (inGroup.length === 0) return null;
      const holdsCurrent = current?.group === g;
      return (
        <NavLink
          key={g}
          label={t(`admin.groups.${g}`)}
          className={classes.group}
          opened={holdsCurrent || !closedGroups.includes(g)}
          onChange={() => !holdsCurrent && toggleGroup(g)}
          childrenOffset={0}
          data-testid={`admin-group-${g}`}
        >
          {inGroup.map(link)}
        </NavLink>
      );
    }),
  ];

  const navigation = (
    <nav aria-label={t('admin.shell.navigation')} data-testid="admin-navbar">
      <Stack gap={2}>
        {links}
        <Divider my="sm" />
        <NavLink
          component={RouterLink}
          to="/desktops"
          label={t('admin.shell.back')}
          leftSection={<IconArrowLeft size={18} stroke={1.8} />}
          className={classes.link}
          onClick={close}
          data-testid="admin-back"
        />
        <NavLink
          component="button"
          label={t('nav.logout')}
          leftSection={<IconLogout size={18} stroke={1.8} />}
          className={classes.link}
          onClick={() => {
            close();
            void logout();
          }}
          data-testid="admin-logout"
        />
      </Stack>
    </nav>
  );

  return (
    <AppShell header={{ height: 60 }} navbar={{ width: 240, breakpoint: 'sm', collapsed: { mobile: true } }} padding={{ base: 'sm', xs: 'lg' }}>
      <AppShell.Header className={classes.header}>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="md" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label={t('nav.open_menu')} />
            <Brand />
            <Badge variant="light" color="grape" leftSection={<IconShieldLock size={12} />} visibleFrom="xs" data-testid="admin-badge">
              {t('admin.shell.title')}
            </Badge>
          </Group>
          <Group gap="xs" wrap="nowrap">
            {user && (
              <Text size="sm" c="dimmed" visibleFrom="md">
                {user.name} · {t(`roles.${user.role}`)}
              </Text>
            )}
            {/* Below xs they are in the navigation drawer, as in the portal. */}
            <Group gap="xs" visibleFrom="xs" wrap="nowrap">
              <LanguageMenu />
              <ColorSchemeToggle />
            </Group>
          </Group>
        </Group>
      </AppShell.Header>
      {!phone && (
        <AppShell.Navbar p="sm" className={classes.sidebar}>
          {navigation}
        </AppShell.Navbar>
      )}
      <NavigationDrawer opened={phone && opened} onClose={close} title={t('admin.shell.navigation')}>
        {navigation}
      </NavigationDrawer>
      <AppShell.Main className={classes.main}>
        <div className={classes.content}>
          <Suspense fallback={<SectionLoader />}>
            <Routes>
              {sections[0] && <Route index element={<Navigate to={sections[0].path} replace />} />}
              {sections.map((s) => {
                const Screen = screenOf(s);
                return <Route key={s.path} path={s.path} element={<Screen />} />;
              })}
              {sections.flatMap(pagesOf).map(({ path, Screen }) => (
                <Route key={path} path={path} element={<Screen />} />
              ))}
              <Route
                path="*"
                element={
                  user ? (
                    <EmptyState icon={<IconSettings size={28} />} title={t('admin.shell.no_section')} body={t('admin.shell.no_section_body')} />
                  ) : (
                    <SectionLoader />
                  )
                }
              />
            </Routes>
          </Suspense>
        </div>
      </AppShell.Main>
    </AppShell>
  );
}

