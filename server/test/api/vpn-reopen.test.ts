// The user VPN's endpoint when it cannot open at the server's start (its UDP port taken by another
// program; on a loaded host, wireguard-go slow to come up): the VPN is refused with its code meanwhile,
// and the server opens it by itself on a later try once it can: no restart needed.
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, expect, it } from 'vitest';
import { call, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { freeGuestSubnet, guestNetworkMissing } from '../helpers/guest-network';
import { describeIf, firstMissing, missingPrograms } from '../helpers/can-run';
import { scaled } from '../helpers/slowdown';
import { until } from '../helpers/wait';

const missing = firstMissing(guestNetworkMissing(), missingPrograms('wireguard-go', 'wg', 'nft'));

const holdUdpPort = () =>
  new Promise<Socket>((resolve) => {
    const s = createSocket('udp4');
    s.bind(0, '0.0.0.0', () => resolve(s));
  });

describeIf(missing)('a user VPN that could not open at the start', () => {
  let server: TestServer | undefined;
  let holder: Socket | undefined;

  afterAll(async () => {
    holder?.close();
    await server?.close();
  });

  it('is refused with its code meanwhile, and opens by itself once its port is free', async () => {
    holder = await holdUdpPort();
    const port = holder.address().port;
    server = await startTestServer({ network: true, env: { VPN_PORT: String(port), VPN_HOST: '192.0.2.10', VPN_USERS_NETWORK: freeGuestSubnet() } });
    expect(server.app.vpn.available).toBe(false);
    expect(server.app.vpn.reason).toMatch(/could not start the VPN endpoint/);
    const token = await loginToken(server, 'advanced');
    const refused = await call(server, '/api/v3/user/vpn/config', { token });
    expect(refused.status).toBe(428);
    expect(await refused.json()).toMatchObject({ description_code: 'no_wireguard_keys' });

    await new Promise<void>((resolve) => holder!.close(() => resolve()));
    holder = undefined;
    await until('the endpoint opened on a later try', async () => server!.app.vpn.available, scaled(30_000));
    expect(server.app.vpn.reason).toBeNull();
    const file = await call(server, '/api/v3/user/vpn/config', { token });
    expect(file.status).toBe(200);
    expect(String(((await file.json()) as { content: string }).content)).toContain(`Endpoint = 192.0.2.10:${port}`);
  }, scaled(90_000));
});
