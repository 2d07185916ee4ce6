import type { TTokenType } from '@vdi/contracts';

/** Where each unfinished sign-in step continues (step 8 of the guard). */
export const STEP_ROUTES: Partial<Record<TTokenType, string>> = {
  register: '/register',
  'category-select': '/login',
  'disclaimer-acknowledgement-required': '/disclaimer',
  'email-verification-required': '/verify-email',
  'email-verification': '/verify-email',
  'password-reset-required': '/reset-password',
  'password-reset': '/reset-password',
  'two-factor-required': '/two-factor',
  'two-factor-enrolment-required': '/two-factor/enrol',
};

/** Where a finished sign-in lands, told (in the history state) that it comes from a sign-in: it may open the person's desktop. */
export const SIGNED_IN_HOME = '/desktops';
export const SIGNED_IN_STATE = { signedIn: true } as const;
export const isSignedInArrival = (state: unknown) => typeof state === 'object' && state !== null && (state as { signedIn?: unknown }).signedIn === true;
/** A browser viewer the portal opened in its own tab (at sign-in): closing it goes back to the desktops screen. */
export const VIEWER_HOME_PARAM = 'home';
