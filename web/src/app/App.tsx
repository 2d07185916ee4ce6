import { lazy, Suspense, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { RouterProvider } from 'react-router';
import { MantineProvider } from '@mantine/core';
import { useNotifications } from '@mantine/notifications';
import { QueryClientProvider } from '@tanstack/react-query';
import { useModalsWanted } from '../lib/modals';
import { queryClient, setQueryErrorHandler } from '../lib/queries';
import { appRouter } from './router';
import { accessibleColors, themeIn } from '../lib/theme';
import { handleError, setErrorNavigator } from '../lib/error-handler';
import { LiveRegions } from '../lib/live';
import { setLoginNavigator, startSessionKeeper } from '../lib/session-actions';

setErrorNavigator((to) => void appRouter().navigate(to));
setQueryErrorHandler(handleError);
setLoginNavigator(() => void appRouter().navigate('/login'));

const NotificationsHost = lazy(() => import('./NotificationsHost'));
const ModalsHost = lazy(() => import('./ModalsHost'));

/** The notification container comes with the first notification; the store keeps it until then. */
function LazyNotifications() {
  const { notifications, queue } = useNotifications();
  const [wanted, setWanted] = useState(false);
  useEffect(() => {
    if (notifications.length + queue.length > 0) setWanted(true);
  }, [notifications.length, queue.length]);
  return wanted ? <NotificationsHost /> : null;
}

/** The dialogs' provider comes with the first dialog (lib/modals.ts). */
function LazyModals() {
  return useModalsWanted() ? <ModalsHost /> : null;
}

export function App() {
  useEffect(() => startSessionKeeper(), []);
  const { t } = useTranslation();
  const theme = useMemo(
    () =>
      themeIn({
        close: t('common.close'),
        page: { first: t('common.pages.first'), previous: t('common.pages.previous'), next: t('common.pages.next'), last: t('common.pages.last') },
      }),
    [t],
  );
  return (
    <MantineProvider theme={theme} cssVariablesResolver={accessibleColors} defaultColorScheme="light">
      <QueryClientProvider client={queryClient}>
        <Suspense fallback={null}>
          <LazyNotifications />
          <LazyModals />
        </Suspense>
        <LiveRegions />
        <RouterProvider router={appRouter()} />
      </QueryClientProvider>
    </MantineProvider>
  );
}
