import type { ComponentType } from 'react';
import { matchPath } from 'react-router';
import type { TRole } from '@vdi/contracts';

const ALL: TRole[] = ['admin', 'manager', 'advanced', 'user'];
const PRIVILEGED: TRole[] = ['admin', 'manager', 'advanced'];

/**
 * public: outside the guard; token: needs a session, a pending sign-in step, or a token
 * in the query (reset-password, verify-email); otherwise the roles that may open it.
 */
export type RouteAccess = 'public' | 'token' | 'session' | readonly TRole[];

export type AppRoute = {
  path: string;
  name: string;
  /** i18n key of the route title (the page title is product title + route title). */
  title: string;
  access: RouteAccess;
  /** The screen; a route without one is not mounted and not in the navigation. */
  load?: () => Promise<{ default: ComponentType }>;
  /** Place in the navbar, when it has one. */
  nav?: { order: number; icon: 'desktops' | 'deployments' | 'pools' | 'templates' | 'media' | 'storage' | 'recycle' | 'bookings' | 'planning' | 'viewers' | 'admin'; label?: string; parent?: string };
  /** Full-page screens without the navbar. */
  bare?: boolean;
  /** With bare: the whole window for the screen, without the brand bar and centred card (viewers). */
  fullscreen?: boolean;
  /**
   * The page most visits start on: shown with the first load's styles (styles/first.css, which
   * must hold its components'), not waiting for all of Mantine's like every other screen.
   */
  firstLoad?: boolean;
};

/** Every route of both documents of the spec, mounted when its screen exists. */
export const ROUTES: AppRoute[] = [
  { path: '/desktops', name: 'desktops', title: 'routes.desktops', access: ALL, nav: { order: 1, icon: 'desktops' }, load: () => import('../features/desktops/DesktopsPage') },
  { path: '/desktops/new', name: 'new_desktop', title: 'routes.new_desktop', access: ALL, load: () => import('../features/domains/NewDesktopPage') },
  { path: '/domain/edit', name: 'edit-domain', title: 'routes.edit_domain', access: ALL, load: () => import('../features/domains/DomainEditPage') },
  { path: '/booking/summary', name: 'booking_summary', title: 'routes.booking_summary', access: ALL, nav: { order: 3.5, icon: 'bookings', label: 'routes.booking' }, load: () => import('../features/bookings/SummaryPage') },
  { path: '/booking/:type/:id', name: 'booking', title: 'routes.booking', access: ALL, load: () => import('../features/bookings/BookingPage') },
  { path: '/planning', name: 'planning', title: 'routes.planning', access: ['admin'], nav: { order: 3.6, icon: 'planning', parent: 'booking_summary' }, load: () => import('../features/planner/PlanningPage') },
  { path: '/deployments', name: 'deployments', title: 'routes.deployments', access: PRIVILEGED, nav: { order: 2, icon: 'deployments' }, load: () => import('../features/deployments/DeploymentsPage') },
  { path: '/deployments/new', name: 'new_deployment', title: 'routes.new_deployment', access: PRIVILEGED, load: () => import('../features/deployments/NewDeploymentPage') },
  { path: '/deployment/:id', name: 'deployment', title: 'routes.deployment', access: PRIVILEGED, load: () => import('../features/deployments/DeploymentPage') },
  { path: '/deployment/:id/videowall', name: 'deployment_videowall', title: 'routes.deployment_videowall', access: PRIVILEGED, load: () => import('../features/deployments/VideowallPage') },
  { path: '/deployment/:id/edit', name: 'deploymentEdit', title: 'routes.deployment_edit', access: PRIVILEGED, load: () => import('../features/deployments/EditDeploymentPage') },
  // Desktop pools (issue 30): the teacher's, manager's and admin's screen; the console shows the same one (app/AdminConsole.tsx).
  { path: '/pools', name: 'pools', title: 'routes.pools', access: PRIVILEGED, nav: { order: 2.5, icon: 'pools' }, load: () => import('../features/desktop-pools/PoolsPage') },
  { path: '/templates', name: 'templates', title: 'routes.templates', access: PRIVILEGED, nav: { order: 3, icon: 'templates' }, load: () => import('../features/templates/TemplatesPage') },
  { path: '/templates/new', name: 'new_template', title: 'routes.new_template', access: PRIVILEGED, load: () => import('../features/templates/NewTemplatePage') },
  { path: '/templates/duplicate', name: 'duplicate_template', title: 'routes.duplicate_template', access: PRIVILEGED, load: () => import('../features/templates/DuplicateTemplatePage') },
  { path: '/media', name: 'media', title: 'routes.media', access: PRIVILEGED, nav: { order: 4, icon: 'media' }, load: () => import('../features/media/MediaPage') },
  { path: '/media/new', name: 'new_media', title: 'routes.new_media', access: PRIVILEGED, load: () => import('../features/media/NewMediaPage') },
  { path: '/media/desktop/new', name: 'newfrommedia', title: 'routes.new_desktop_from_media', access: PRIVILEGED, load: () => import('../features/media/NewDesktopFromMediaPage') },
  { path: '/userstorage', name: 'storage', title: 'routes.storage', access: ALL, nav: { order: 5, icon: 'storage' }, load: () => import('../features/storage/StoragePage') },
  { path: '/recycleBins', name: 'recycleBins', title: 'routes.recycle_bins', access: ALL, nav: { order: 6, icon: 'recycle' }, load: () => import('../features/recycle-bin/RecycleBinsPage') },
  { path: '/recyclebin/:id', name: 'recycleBin', title: 'routes.recycle_bin', access: ALL, load: () => import('../features/recycle-bin/RecycleBinPage') },
  { path: '/viewers', name: 'viewers', title: 'routes.viewers', access: ALL, nav: { order: 7, icon: 'viewers' }, load: () => import('../features/account/ViewersPage') },
  { path: '/api-reference', name: 'api_reference', title: 'routes.api_reference', access: ALL, load: () => import('../features/account/ApiReferencePage') },
  { path: '/profile/:action?', name: 'profile', title: 'routes.profile', access: ALL, load: () => import('../features/account/ProfilePage') },
  { path: '/login', name: 'login', title: 'routes.login', access: 'public', bare: true, firstLoad: true, load: () => import('../features/auth/LoginPage') },
  // Where a sign-in through an OpenID or SAML provider comes back (its token in the step cookie).
  { path: '/login/done', name: 'login_done', title: 'routes.login', access: 'public', bare: true, load: () => import('../features/auth/LoginDonePage') },
  // A category's own sign-in address (/login/{custom_url}, and the original's /login/{provider}/{custom_url}).
  { path: '/login/:category', name: 'login_custom_url', title: 'routes.login', access: 'public', bare: true, firstLoad: true, load: () => import('../features/auth/LoginPage') },
  // A category's own sign-in address: the login page for that category only.
  { path: '/login/:provider/:category', name: 'login_category', title: 'routes.login', access: 'public', bare: true, firstLoad: true, load: () => import('../features/auth/LoginPage') },
  { path: '/register', name: 'register', title: 'routes.register', access: 'public', bare: true, load: () => import('../features/auth/RegisterPage') },
  { path: '/maintenance', name: 'maintenance', title: 'routes.maintenance', access: 'public', bare: true, load: () => import('../features/system/MaintenancePage') },
  { path: '/forgot-password', name: 'forgot-password', title: 'routes.forgot_password', access: 'public', bare: true, load: () => import('../features/auth/ForgotPasswordPage') },
  { path: '/reset-password', name: 'reset-password', title: 'routes.reset_password', access: 'token', bare: true, load: () => import('../features/auth/ResetPasswordPage') },
  { path: '/verify-email', name: 'verify-email', title: 'routes.verify_email', access: 'token', bare: true, load: () => import('../features/auth/VerifyEmailPage') },
  // The second factor after the password, and the enrolment a sign-in leads to when it is required.
  { path: '/two-factor', name: 'two-factor', title: 'routes.two_factor', access: 'public', bare: true, load: () => import('../features/auth/TwoFactorPage') },
  { path: '/two-factor/enrol', name: 'two-factor-enrol', title: 'routes.two_factor_enrol', access: 'public', bare: true, load: () => import('../features/auth/TwoFactorEnrolPage') },
  { path: '/disclaimer', name: 'disclaimer', title: 'routes.disclaimer', access: 'public', bare: true, load: () => import('../features/auth/DisclaimerPage') },
  { path: '/export-user', name: 'export-user', title: 'routes.export_user', access: 'public', bare: true, load: () => import('../features/account/ExportUserPage') },
  { path: '/migration', name: 'migration', title: 'routes.migration', access: 'session', bare: true, load: () => import('../features/account/MigrationPage') },
  { path: '/rdp', name: 'Rdp', title: 'routes.rdp', access: 'session', bare: true, fullscreen: true, load: () => import('../features/viewer/RdpViewerPage') },
  { path: '/vw/*', name: 'direct_viewer', title: 'routes.direct_viewer', access: 'public', bare: true, load: () => import('../features/direct/DirectViewerPage') },
  { path: '/viewer/vnc', name: 'viewer_vnc', title: 'routes.viewer', access: 'public', bare: true, fullscreen: true, load: () => import('../features/viewer/VncViewerPage') },
  // The administration console: its own layout and navigation (features/admin/sections.ts).
  { path: '/isard-admin/*', name: 'isard_admin', title: 'routes.admin', access: ['admin', 'manager'], bare: true, fullscreen: true, nav: { order: 7, icon: 'admin' }, load: () => import('./AdminConsole') },
  { path: '/error/:code', name: 'error', title: 'routes.error', access: 'public', bare: true, load: () => import('../features/system/ErrorPage') },
];

export const mounted = (routes: AppRoute[] = ROUTES) => routes.filter((r) => r.load);

export const allows = (access: RouteAccess, role: TRole | undefined): boolean =>
  typeof access === 'string' ? true : role !== undefined && access.includes(role);

/** The navbar: built screens with a nav entry that the role may open, in order. */
export const navFor = (role: TRole, routes: AppRoute[] = ROUTES) =>
  mounted(routes)
    .filter((r) => r.nav && allows(r.access, role))
    .sort((a, b) => a.nav!.order - b.nav!.order);

export const pathOf = (name: string) => ROUTES.find((r) => r.name === name)?.path ?? '/';

/** Where a nav entry links: its path without a trailing `/*` (the console's own routes follow). */
export const linkOf = (r: AppRoute) => r.path.replace(/\/\*$/, '');

/** Starts downloading the screen of a path: the first one loads while the texts do (main.tsx). */
export function preloadScreen(pathname: string, routes: AppRoute[] = ROUTES) {
  void mounted(routes)
    .find((r) => matchPath(r.path, pathname))
    ?.load?.()
    .catch(() => undefined);
}
