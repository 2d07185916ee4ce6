import { z } from 'zod';
import { ZRole } from './roles';
import { ZIdentityPerson } from './identity';

/** Token types of the authentication service (reference §2.2). A login token has none. */
export const TOKEN_TYPES = [
  'login',
  'register',
  'category-select',
  'disclaimer-acknowledgement-required',
  'email-verification-required',
  'email-verification',
  'password-reset-required',
  'password-reset',
  /** Direct-viewer pages: one desktop, no session. */
  'viewer',
  /** A user-migration code (valid 1 hour; the newest one of an account is the only valid one). */
  'user-migration',
  /** After the password of a person with two-factor on: a TOTP or recovery code continues the sign-in. */
  'two-factor-required',
  /** After the password of a person two-factor is required of, without it: enrol, then the sign-in goes on. */
  'two-factor-enrolment-required',
] as const;
export const ZTokenType = z.enum(TOKEN_TYPES);
export type TTokenType = z.infer<typeof ZTokenType>;

export const ZSessionData = z.object({
  provider: z.string(),
  user_id: z.string(),
  role_id: ZRole,
  category_id: z.string(),
  group_id: z.string(),
  name: z.string(),
});
export type TSessionData = z.infer<typeof ZSessionData>;

export const ZCategoryChoice = z.object({ id: z.string(), name: z.string(), photo: z.string() });
export type TCategoryChoice = z.infer<typeof ZCategoryChoice>;

/** Claims the web reads from a token (it never verifies them: the server does). */
export const ZTokenClaims = z.object({
  exp: z.number(),
  iat: z.number(),
  nbf: z.number().optional(),
  iss: z.string().optional(),
  sub: z.string().optional(),
  kid: z.string().optional(),
  type: z.string().optional(),
  session_id: z.string().optional(),
  data: ZSessionData.optional(),
  user_id: z.string().optional(),
  categories: z.array(ZCategoryChoice).optional(),
  username: z.string().optional(),
  category_id: z.string().optional(),
  email: z.string().optional(),
  current_email: z.string().optional(),
  name: z.string().optional(),
  desktop_id: z.string().optional(),
  /** A password-reset link's stamp of the password it replaces: any password change since ends the link. */
  password_stamp: z.string().optional(),
  /** A person signed in by a directory or identity provider, carried through the category-select step. */
  identity: ZIdentityPerson.extend({
    provider_id: z.string(),
    /** the attributes the provider's mapping rules read */
    attributes: z.record(z.string(), z.array(z.string())).optional(),
  }).optional(),
});
export type TTokenClaims = z.infer<typeof ZTokenClaims>;

export const ZLoginQuery = z.object({
  provider: z.enum(['form', 'local']).default('form'),
  category_id: z.string().max(64).optional(),
  redirect: z.string().max(512).optional(),
});

/** Form fields of POST /authentication/login (multipart or urlencoded). */
export const ZLoginForm = z.object({
  username: z.string().trim().min(1).max(128),
  password: z.string().min(1).max(512),
  provider: z.string().optional(),
  category_id: z.string().optional(),
});

export const ZRenewAnswer = z.object({ token: z.string() });
export const ZLogoutAnswer = z.object({ redirect: z.string().optional() });
export const ZProvidersAnswer = z.object({ providers: z.array(z.string()) });
/** POST /isard-admin/login and GET /isard-admin/logout/remote (the admin app's session). */
export const ZAdminLoginAnswer = z.object({ success: z.literal(true) });

export const ZForgotPasswordBody = z.object({
  category_id: z.string().min(1).max(64),
  email: z.email().max(254),
});
export const ZResetPasswordBody = z.object({ password: z.string().min(1).max(512) });
export const ZRequestEmailVerificationBody = z.object({ email: z.email().max(254) });

/** Self-service sign-up: the identity is held server-side until a registration code is given. */
export const ZSignupBody = z.object({
  category_id: z.string().min(1).max(64),
  username: z
    .string()
    .trim()
    .min(3)
    .max(64)
    .regex(/^[A-Za-z0-9._-]+$/),
  name: z.string().trim().min(1).max(128),
  email: z.email().max(254),
  password: z.string().min(1).max(512),
});
export const ZRegisterBody = z.object({ code: z.string().trim().min(1).max(128) });

export const SESSION_COOKIE = 'isardvdi_session';
