import type { ComponentType } from 'react';
import { createBrowserRouter, Navigate, Outlet, redirect, useRouteError, type RouteObject } from 'react-router';
import { Center, Loader } from '@mantine/core';
import { isCancelledError } from '@tanstack/react-query';
import i18n, { applySavedLanguage } from '../i18n';
import { session } from '../lib/session';
import { openSocket } from '../lib/socket';
import { BareLayout } from './BareLayout';
import NotFoundPage from '../features/system/NotFoundPage';
import { loadWithRetries, withinChunkTime } from './chunk-timeout';
import { runGuard, type GuardDeps } from './guard';
import { RouteLoadError } from './RouteLoadError';
import { configQuery, cutoffQuery, queryClient, userQuery } from '../lib/queries';
import { mounted, type AppRoute } from './routes';
import { logout, renewSession } from '../lib/session-actions';

let titleKey = 'routes.desktops';
export const setTitle = (key: string) => {
  titleKey = key;
  document.title = `${i18n.t('app.title')} · ${i18n.t(key)}`;
};
i18n.on('languageChanged', () => setTitle(titleKey));

const guardDeps: GuardDeps = {
  setTitle,
  sessionToken: () => session.token(),
  stepToken: () => session.stepToken(),
  drift: () => session.drift(),
  now: () => Date.now(),
  renew: renewSession,
  logout: async () => {
    session.clear();
    queryClient.clear();
  },
  // A fetch of the user already under way that another caller cancels (an invalidation refetches it)
  // rejects here with a CancelledError: the user is fetched again, once.
  fetchUser: () => queryClient.fetchQuery(userQuery).catch((err: unknown) => (isCancelledError(err) ? queryClient.fetchQuery(userQuery) : Promise.reject(err))),
  applySavedLanguage,
  openSocket: () =>
    openSocket(() => void logout({ callServer: false })).then(
      () => undefined,
      // Without its client (a failed download) screens work, without live updates.
      (err: unknown) => console.warn('Live socket not opened', err),
    ),
  ensureConfig: () => queryClient.ensureQueryData(configQuery),
  ensureRecycleCutoff: () => queryClient.ensureQueryData(cutoffQuery),
  isMounted: (path) => mounted().some((r) => r.path === path),
};

function GuardError() {
  return <RouteLoadError error={useRouteError()} />;
}

function PageLoader() {
  return (
    <Center h="100vh">
      <Loader />
    </Center>
  );
}

/**
 * A lazily loaded screen (a failed download tried again a few times), or — when its code does not
 * arrive in time or keeps failing to — a screen saying so with a retry. (A rejected `lazy` would leave the route unrendered: the router renders no
 * route whose `lazy` has not resolved, not even its error element.)
 */
async function screenOrError(load: () => Promise<ComponentType>): Promise<{ Component: ComponentType }> {
  try {
    return { Component: await withinChunkTime(loadWithRetries(load)) };
  } catch (error) {
    console.warn('A screen did not load', error);
    return { Component: () => <RouteLoadError error={error} /> };
  }
}

function toRouteObject(route: AppRoute): RouteObject {
  return {
    path: route.path,
    // The screen, with all of Mantine's styles (the first load has only the sign-in page's).
    // A screen whose code does not arrive within 120 s (or fails to) shows an error with a retry, not a spinner.
    lazy: () => screenOrError(async () => (await Promise.all([route.load!(), route.firstLoad ? undefined : import('../styles/all')]))[0].default),
    // A guard that could not read the session user (not a sign-out): what happened, and a retry.
    errorElement: <GuardError />,
    loader: async ({ request }) => {
      const url = new URL(request.url);
      const to = await runGuard(route, url, guardDeps);
      if (to && to !== url.pathname) throw redirect(to);
      return null;
    },
  };
}

export function buildRoutes(routes: AppRoute[] = mounted()): RouteObject[] {
  return [
    { path: '/', element: <Navigate to="/desktops" replace /> },
    // The shell of signed-in screens loads with the first of them, not with the sign-in page.
    {
      lazy: () => screenOrError(async () => (await Promise.all([import('./AppLayout'), import('../styles/all')]))[0].AppLayout),
      hydrateFallbackElement: <PageLoader />,
      children: routes.filter((r) => !r.bare).map(toRouteObject),
    },
    // Viewers take the whole window: no brand bar, no card.
    { element: <Outlet />, hydrateFallbackElement: <PageLoader />, children: routes.filter((r) => r.bare && r.fullscreen).map(toRouteObject) },
    {
      element: <BareLayout />,
      hydrateFallbackElement: <PageLoader />,
      children: [
        ...routes.filter((r) => r.bare && !r.fullscreen).map(toRouteObject),
        { path: '*', element: <NotFoundPage />, loader: () => (setTitle('routes.not_found'), null) },
      ],
    },
  ];
}

let router: ReturnType<typeof createBrowserRouter> | undefined;
/** The app's router, made on first use: making it starts the first navigation (guard, page title), which needs the texts. */
export const appRouter = () => (router ??= createBrowserRouter(buildRoutes()));
