import { SESSION_COOKIE, type TTokenClaims } from '@vdi/contracts';
import { getCookie, removeCookie, setCookie } from './cookies';
import { clockDrift, readToken, typeOf } from './token';

/** The token of an unfinished sign-in step (register, category-select, disclaimer…). */
export const STEP_COOKIE = 'authorization';
const DRIFT_KEY = 'vdi.clockDrift';

type Listener = () => void;
const listeners = new Set<Listener>();
const notify = () => listeners.forEach((l) => l());

export const session = {
  /** The session token (a login token), held in the isardvdi_session cookie. */
  token: (): string | undefined => getCookie(SESSION_COOKIE),
  stepToken: (): string | undefined => getCookie(STEP_COOKIE),
  claims: (): TTokenClaims | null => readToken(getCookie(SESSION_COOKIE)),
  drift: (): number => Number(sessionStorage.getItem(DRIFT_KEY) ?? 0),

  /** Keeps a token where it belongs: a login token becomes the session, any other a pending step. */
  store(token: string) {
    const claims = readToken(token);
    if (!claims) return;
    sessionStorage.setItem(DRIFT_KEY, String(clockDrift(claims)));
    if (typeOf(claims) === 'login') {
      setCookie(SESSION_COOKIE, token);
      removeCookie(STEP_COOKIE);
    } else {
      setCookie(STEP_COOKIE, token, claims.exp - claims.iat);
    }
    notify();
  },

  clear() {
    removeCookie(SESSION_COOKIE);
    removeCookie(STEP_COOKIE);
    removeCookie('session');
    notify();
  },

  subscribe(listener: Listener) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
