// Who the bench signs in as (made by seed.ts before the server starts).
export const BENCH_USERS = 500;
export const LIST_DESKTOPS = 1000;
/** Desktops in all for the console's list (`admin-desktops` row): the list user's 1,000 and 8 of each student. */
export const ADMIN_DESKTOPS = 5000;
export const BENCH_GROUP = 'bench-group';
export const LIST_USER = 'benchlists';
export const BENCH_PASSWORD = 'bench-pass-123';
export const benchUsername = (i: number) => `bench${String(i).padStart(3, '0')}`;
/** People in the `usage` row's generated year of history (seed.ts). */
export const USAGE_PEOPLE = 5000;
