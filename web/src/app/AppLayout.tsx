import { useEffect } from 'react';
import { NavLink as RouterLink, Outlet, useNavigation } from 'react-router';
import { AppShell, Burger, Group, Menu, NavLink, Progress, Stack, Text, UnstyledButton, VisuallyHidden } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import {
  IconCalendarCog,
  IconCalendarEvent,
  IconChevronDown,
  IconDatabase,
  IconDeviceDesktop,
  IconDisc,
  IconDeviceTv,
  IconHelp,
  IconLogout,
  IconRecycle,
  IconShieldLock,
  IconStack2,
  IconTemplate,
  IconUserCircle,
  IconUsersGroup,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { linkOf, navFor, type AppRoute } from './routes';
import { configQuery, userQuery } from '../lib/queries';
import { logout } from '../lib/session-actions';
import { applySavedLanguage } from '../i18n';
import { Brand } from '../components/Brand';
import { ColorSchemeToggle } from '../components/ColorSchemeToggle';
import { LanguageMenu } from '../components/LanguageMenu';
import { NavigationDrawer, usePhoneNavigation } from '../components/PhoneNavigation';
import classes from './AppLayout.module.css';
import { RecycleBinCounter } from '../features/recycle-bin/RecycleBinCounter';
import { useLiveMessages } from '../features/bookings/messages';
import { useLiveUserData } from '../features/account/live';
import { useSupportNotice } from '../features/desktops/support-notice';
import { UserAvatar } from '../entities/user/UserAvatar';
import { StatusBar } from '../features/system/StatusBar';
import { VpnNavLink } from '../entities/vpn-bastion/VpnNavLink';


const ICONS = { desktops: IconDeviceDesktop, deployments: IconUsersGroup, pools: IconStack2, templates: IconTemplate, media: IconDisc, storage: IconDatabase, recycle: IconRecycle, bookings: IconCalendarEvent, planning: IconCalendarCog, viewers: IconDeviceTv, admin: IconShieldLock } as const;

export function AppLayout() {
  const { t } = useTranslation();
  const [opened, { toggle, close }] = useDisclosure(false);
  const { data: user } = useQuery(userQuery);
  const { data: config } = useQuery({ ...configQuery, enabled: Boolean(user) });
  useLiveMessages(Boolean(user));
  useLiveUserData(Boolean(user));
  useSupportNotice(Boolean(user));
  const navigation = useNavigation();
  const phone = usePhoneNavigation();

  // A language saved in another browser while this one is open (the guard applies it on every screen change).
  useEffect(() => {
    if (user) void applySavedLanguage(user.lang);
  }, [user]);

  // The bookings entry follows the show_bookings_button setting (spec core §3 config).
  const items = user ? navFor(user.role).filter((r) => r.name !== 'booking_summary' || config?.show_bookings_button) : [];
  const iconOf = (r: AppRoute) => ICONS[r.nav!.icon as keyof typeof ICONS] ?? IconDeviceDesktop;
  // A vertical sidebar has room for every section; an entry with a parent (planning under
  // bookings) sits indented right below it.
  const links = items.map((r) => {
    const Icon = iconOf(r);
    const child = items.some((p) => p.name === r.nav!.parent);
    return (
      <NavLink
        key={r.name}
        component={RouterLink}
        to={linkOf(r)}
        label={t(r.nav!.label ?? r.title)}
        leftSection={<Icon size={18} stroke={1.8} />}
        rightSection={r.nav!.icon === 'recycle' ? <RecycleBinCounter /> : undefined}
        className={child ? `${classes.link} ${classes.child}` : classes.link}
        onClick={close}
        data-testid={`nav-${r.name}`}
      />
    );
  });

  const navigationLinks = (
    <nav aria-label={t('nav.main')} data-testid="navbar">
      <Stack gap={2}>
        {links}
        <VpnNavLink className={classes.link} onDone={close} />
        {config?.documentation_url && (
          <NavLink
            href={config.documentation_url}
            target="_blank"
            rel="noopener noreferrer"
            label={t('nav.help')}
            leftSection={<IconHelp size={18} stroke={1.8} />}
            className={classes.link}
            data-testid="nav-help"
          />
        )}
        <NavLink
          component={RouterLink}
          to="/profile"
          label={t('nav.profile')}
          leftSection={<IconUserCircle size={18} stroke={1.8} />}
          className={classes.link}
          onClick={close}
          data-testid="nav-profile"
        />
      </Stack>
    </nav>
  );

  return (
    <AppShell header={{ height: 60 }} navbar={{ width: 232, breakpoint: 'sm', collapsed: { mobile: true } }} padding={{ base: 'sm', xs: 'lg' }}>
      <AppShell.Header className={classes.header}>
        {navigation.state === 'loading' && <Progress value={100} animated size="xs" radius={0} className={classes.progress} aria-label={t('common.loading')} />}
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="lg" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label={t('nav.open_menu')} />
            <Brand />
          </Group>
          <Group gap="xs" wrap="nowrap">
            <Group gap="xs" visibleFrom="xs" wrap="nowrap">
              <LanguageMenu />
              <ColorSchemeToggle />
            </Group>
            {user && (
              <Menu position="bottom-end" shadow="md" width={240}>
                <Menu.Target>
                  <UnstyledButton className={classes.user} data-testid="user-menu">
                    <Group gap={8} wrap="nowrap">
                      <UserAvatar user={user} size={32} data-testid="header-avatar" />
                      <div className={classes.userText}>
                        <Text size="sm" fw={600} lh={1.2}>
                          {user.name}
                        </Text>
                        <Text size="xs" c="dimmed" lh={1.2}>
                          {t(`roles.${user.role}`)}
                        </Text>
                      </div>
                      <IconChevronDown size={14} aria-hidden />
                    </Group>
                    {/* Named by what is seen (the name and role), then what the button opens (WCAG 2.5.3). */}
                    <VisuallyHidden>{t('nav.user_menu')}</VisuallyHidden>
                  </UnstyledButton>
                </Menu.Target>
                <Menu.Dropdown>
                  <Menu.Label>
                    {t('nav.signed_in_as')} {user.username}
                  </Menu.Label>
                  <Menu.Item component={RouterLink} to="/profile" leftSection={<IconUserCircle size={16} />}>
                    {t('nav.profile')}
                  </Menu.Item>
                  <Menu.Divider />
                  <Menu.Item color="red" leftSection={<IconLogout size={16} />} onClick={() => void logout()} data-testid="logout">
                    {t('nav.logout')}
                  </Menu.Item>
                </Menu.Dropdown>
              </Menu>
            )}
          </Group>
        </Group>
      </AppShell.Header>
      {!phone && (
        <AppShell.Navbar p="sm" className={classes.sidebar}>
          {navigationLinks}
        </AppShell.Navbar>
      )}
      <NavigationDrawer opened={phone && opened} onClose={close} title={t('nav.main')}>
        {navigationLinks}
      </NavigationDrawer>
      <AppShell.Main className={classes.main}>
        <div className={classes.content}>
          {user && <StatusBar />}
          <Outlet />
        </div>
      </AppShell.Main>
    </AppShell>
  );
}
