/**
 * The names and descriptions the seed writes (the default organisation, the demo's groups,
 * templates, desktops and GPU card). They are data: stored in English like anything a person
 * types, so searches, sorting and the API's answers do not depend on a language. The web shows
 * a text still exactly as seeded in the reader's language (catalogue key `built_in.<key>`); a
 * renamed item shows as typed.
 */
export const BUILT_IN_TEXTS = {
  default_category: 'Default',
  default_category_description: 'The default organisation',
  default_group_description: 'Everyone of the default category',
  teachers: 'Teachers',
  teachers_description: 'Teaching staff',
  students_1a: 'Students 1A',
  students_1a_description: 'First year, class A',
  students_1b: 'Students 1B',
  students_1b_description: 'First year, class B',
  lab_category: 'Research Lab',
  lab_category_description: 'A second organisation, with its own users',
  lab_group: 'Lab members',
  lab_group_description: 'Everyone of the lab',
  registration_code_description: 'Self sign-up for students of 1B',
  demo_template: 'Demo Linux',
  demo_template_description: 'A tiny Linux with a console, a web server and SSH (user demo / demo)',
  rdp_template: 'Debian desktop (RDP)',
  rdp_template_description: 'A light Debian desktop (a terminal and a clock) to open by RDP; sign in with the desktop’s guest credentials',
  demo_desktop: 'Demo desktop',
  lab_desktop: 'Lab desktop',
  demo_desktop_description: 'Created from Demo Linux',
  gpu_desktop: 'GPU desktop',
  gpu_desktop_description: 'Needs a booking of the NVIDIA A40 2Q profile',
  gpu_card_description: 'Demo card: bookings reserve its profiles (no GPU is attached on this machine)',
  gpu_profile_2q_description: 'Office work and light 3D (24 per card)',
  gpu_profile_4q_description: '3D design and video (12 per card)',
  /** the hypervisor row of the server's own host (migration 0010) */
  local_hypervisor: 'This server',
} as const;

export type TBuiltInTextKey = keyof typeof BUILT_IN_TEXTS;

/** The key of a text exactly as the seed wrote it, if it is one. */
const KEY_OF = new Map<string, TBuiltInTextKey>(Object.entries(BUILT_IN_TEXTS).map(([k, v]) => [v, k as TBuiltInTextKey]));
export const builtInTextKey = (text: string | null | undefined): TBuiltInTextKey | undefined => (text ? KEY_OF.get(text) : undefined);
