import { ZRenewAnswer } from '@vdi/contracts';
import { AUTH, request, setSessionRenewer } from './api';
import { session } from './session';
import { closeSocket } from './socket';
import { needsRenewal } from './token';
import { queryClient } from './queries';

let renewing: Promise<void> | null = null;

/** Renews the session token once, however many callers ask at the same time. */
export function renewSession(): Promise<void> {
  renewing ??= (async () => {
    try {
      const token = session.token();
      if (!token) throw new Error('no session');
      const { token: fresh } = await request(`${AUTH}/renew`, { method: 'POST', bearer: token }, ZRenewAnswer);
      session.store(fresh);
    } finally {
      renewing = null;
    }
  })();
  return renewing;
}

// A call about to go with a token in its last 30 s renews it first (lib/api.ts).
setSessionRenewer(renewSession);

let navigateToLogin: () => void = () => location.assign('/login');
export const setLoginNavigator = (fn: () => void) => {
  navigateToLogin = fn;
};

/** Signs out here and on the server; always ends on the sign-in page. */
export async function logout(opts: { callServer?: boolean } = {}) {
  const token = session.token() ?? session.stepToken();
  session.clear();
  closeSocket();
  queryClient.clear();
  if (token && opts.callServer !== false) {
    const answer = await request<{ redirect?: string }>(`${AUTH}/logout`, { method: 'POST', bearer: token }).catch(() => undefined);
    // A session a provider opened: the sign-in page offers the provider's own sign-out.
    if (answer?.redirect) sessionStorage.setItem('vdi.idpLogout', answer.redirect);
  }
  // The admin area's session ends with the portal's (its cookie too), as the original's sign-out did.
  await request('/isard-admin/logout/remote', {}).catch(() => undefined);
  navigateToLogin();
}

/**
 * Every second: a session cookie that disappeared signs out; a token that expires
 * within 30 s (on the server's clock) is renewed; a failed renewal signs out.
 */
export function startSessionKeeper(): () => void {
  let hadSession = Boolean(session.token());
  // Told at once when a session is stored, so a cookie removed within the first second counts too.
  const unsubscribe = session.subscribe(() => {
    if (session.token()) hadSession = true;
  });
  const timer = setInterval(() => {
    const claims = session.claims();
    if (!claims) {
      if (hadSession) void logout({ callServer: false });
      hadSession = false;
      return;
    }
    hadSession = true;
    if (needsRenewal(claims, session.drift()) && !renewing) {
      renewSession().catch(() => void logout({ callServer: false }));
    }
  }, 1000);
  return () => {
    clearInterval(timer);
    unsubscribe();
  };
}
