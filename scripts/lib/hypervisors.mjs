// A lab host added as an admin adds a hypervisor in the console, through the admin API (`npm run cluster`,
// the bench's cluster rows): the first POST answers the host key the server read; it is confirmed only when
// it is the lab's own key for that host (never accepted unseen), by the second POST.

/**
 * `call(method, path, body)` answers `{ status, body }` as a signed-in admin; `fingerprintOf` is the
 * engine's (`SHA256:…` of a key's base64 body). Answers the added hypervisor's view.
 */
export async function addLabHost(call, host, fingerprintOf) {
  const shown = (await call('POST', '/admin/hypervisors', { uri: host.uri })).body;
  const expected = fingerprintOf(host.hostKey.split(' ')[1]);
  if (shown.fingerprint !== expected) throw new Error(`${host.name} presented ${shown.fingerprint}, not the lab's key ${expected}: not confirmed`);
  return (await call('POST', '/admin/hypervisors', { uri: host.uri, name: host.name, host_key_fingerprint: shown.fingerprint })).body;
}

/** Waits until the hypervisors `ids` are online (connected), or throws with each one's last error. */
export async function untilOnline(call, ids, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const items = (await call('GET', '/admin/hypervisors')).body.items;
    const mine = ids.map((id) => items.find((i) => i.id === id));
    if (mine.every((m) => m?.state === 'Online')) return mine;
    if (Date.now() > deadline) throw new Error(`hypervisors not online in time: ${mine.filter((m) => m?.state !== 'Online').map((m) => `${m?.name}: ${m?.last_error}`).join('; ')}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
