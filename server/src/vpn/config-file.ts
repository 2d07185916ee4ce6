// The user's WireGuard file (reference §2.15): no PostUp (Android), AllowedIPs = the guests' range only.

export function wgUserConfig(o: {
  address: string;
  privateKey: string;
  serverPublicKey: string;
  endpoint: string;
  allowedIps: string;
}): string {
  return [
    '[Interface]',
    `Address = ${o.address}`,
    `PrivateKey = ${o.privateKey}`,
    'MTU = 1420',
    '',
    '[Peer]',
    `PublicKey = ${o.serverPublicKey}`,
    `Endpoint = ${o.endpoint}`,
    `AllowedIPs = ${o.allowedIps}`,
    'PersistentKeepalive = 25',
    '',
  ].join('\n');
}

/** `host:port`, IPv6 literals in brackets. */
export function wgEndpoint(host: string, port: number): string {
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `${h}:${port}`;
}

/** The endpoint's own configuration for `wg syncconf` (wg format, not wg-quick's): the peers are the users. */
export function wgServerConfig(o: { privateKey: string; listenPort: number; peers: { publicKey: string; address: string }[] }): string {
  const lines = ['[Interface]', `PrivateKey = ${o.privateKey}`, `ListenPort = ${o.listenPort}`, ''];
  for (const p of o.peers) lines.push('[Peer]', `PublicKey = ${p.publicKey}`, `AllowedIPs = ${p.address}/32`, '');
  return lines.join('\n');
}
