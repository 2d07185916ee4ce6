import { z } from 'zod';

/** Error kinds and their HTTP status, as the original system answers (reference §2.1). */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_required: 428,
  too_many_requests: 429,
  internal_server: 500,
  service_unavailable: 503,
  gateway_timeout: 504,
  insufficient_storage: 507,
} as const;
export type ErrorKind = keyof typeof ERROR_STATUS;

/**
 * Every description_code the server may answer. The web translates each one
 * (a test fails when a catalogue misses one); anything else falls back to generic_error.
 */
export const DESCRIPTION_CODES = [
  'generic_error',
  'bad_request',
  'not_found',
  'conflict',
  'forbidden',
  'unauthorized',
  'internal_server',
  'service_unavailable',
  'too_many_requests',
  'validation_error',
  'missing_required_data',
  // sign-in and session
  'login_failed',
  'login_too_many_attempts',
  'user_disabled',
  'user_not_found',
  'invalid_token',
  'token_expired',
  'session_expired',
  'missing_token',
  'not_verified',
  'username_exists',
  'user_exists',
  'code_not_found',
  'email_domain_not_allowed',
  'category_not_found',
  'password_policy_length',
  'password_policy_digits',
  'password_policy_uppercase',
  'password_policy_lowercase',
  'password_policy_special_characters',
  'password_policy_not_username',
  'password_policy_old_password',
  'password_wrong_current',
  'password_same_as_current',
  'email_not_configured',
  'email_already_in_use',
  'invalid_language',
  'maintenance',
  // desktops
  'desktop_not_found',
  'template_not_found',
  'desktop_action_not_available',
  'desktop_start_timeout',
  'desktop_stop_timeout',
  'desktop_start_failed',
  'desktop_storage_not_ready',
  'hypervisors_not_available',
  'viewer_not_started',
  'unable_to_get_viewer',
  'viewer_protocol_not_implemented',
  'temporal_new_reservable',
  'desktop_start_user_quota_exceeded',
  'desktop_start_memory_quota_exceeded',
  'desktop_start_vcpu_quota_exceeded',
  'desktop_start_group_limit_exceeded',
  'desktop_start_category_limit_exceeded',
  'desktop_start_group_memory_limit_exceeded',
  'desktop_start_group_vcpu_limit_exceeded',
  'desktop_start_category_memory_limit_exceeded',
  'desktop_start_category_vcpu_limit_exceeded',
  'desktop_new_user_quota_exceeded',
  'desktop_new_group_limit_exceeded',
  'desktop_new_category_limit_exceeded',
  // media
  'media_url_bad_format',
  'media_url_not_valid',
  'media_url_not_found',
  'media_not_found',
  'media_not_downloaded',
  'media_action_not_available',
  'media_in_use',
  'media_floppy_not_bootable',
  'media_new_user_quota_exceeded',
  'media_new_group_limit_exceeded',
  'media_new_category_limit_exceeded',
  'total_size_quota_exceeded',
  'group_total_size_limit_exceeded',
  'category_total_size_limit_exceeded',
  'desktop_new_disk_size_quota_exceeded',
  'new_desktop_name_exists',
  'desktop_new_memory_quota_exceeded',
  'desktop_new_vcpu_quota_exceeded',
] as const;
export type DescriptionCode = (typeof DESCRIPTION_CODES)[number];

export const ZApiErrorBody = z.object({
  error: z.string(),
  msg: z.string(),
  description_code: z.string(),
  description: z.string(),
  params: z.record(z.string(), z.unknown()).nullable(),
});
export type TApiErrorBody = z.infer<typeof ZApiErrorBody>;

/** Quota codes open a confirmation with a go-to-profile button (spec core §8). */
export const isQuotaCode = (code: string): boolean => code.includes('quota');
