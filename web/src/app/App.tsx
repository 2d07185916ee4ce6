import { useEffect } from 'react';
import { RouterProvider } from 'react-router';
import { MantineProvider } from '@mantine/core';
import { ModalsProvider } from '@mantine/modals';
import { Notifications } from '@mantine/notifications';
import { QueryClientProvider } from '@tanstack/react-query';
import { queryClient } from './queries';
import { appRouter } from './router';
import { theme } from './theme';
import { setErrorNavigator, NOTIFY_MS } from './error-handler';
import { setLoginNavigator, startSessionKeeper } from './session-actions';

setErrorNavigator((to) => void appRouter().navigate(to));
setLoginNavigator(() => void appRouter().navigate('/login'));

export function App() {
  useEffect(() => startSessionKeeper(), []);
  return (
    <MantineProvider theme={theme} defaultColorScheme="light">
      <QueryClientProvider client={queryClient}>
        <ModalsProvider>
          <Notifications position="top-center" autoClose={NOTIFY_MS} limit={3} />
          <RouterProvider router={appRouter()} />
        </ModalsProvider>
      </QueryClientProvider>
    </MantineProvider>
  );
}
