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
