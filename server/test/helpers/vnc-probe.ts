// Test helper: speaks just enough RFB 3.8 to check that a machine's VNC server is there and that
// the password set through the driver is the one it accepts (VNC authentication, type 2).
import { connect } from 'node:net';
import type { VncEndpoint } from '../../src/engine/driver';
import { byteReader, VncRefusedError, vncHandshake } from '../../src/engine/vnc-client';

export { vncAuthResponse } from '../../src/engine/vnc-client';

export type VncProbeResult =
  | { ok: true; securityTypes: number[]; width: number; height: number; name: string }
  | { ok: false; securityTypes: number[]; reason: string };

export async function probeVnc(endpoint: VncEndpoint, password: string, timeoutMs = 5000): Promise<VncProbeResult> {
  const sock = 'socket' in endpoint ? connect(endpoint.socket) : connect(endpoint.port, endpoint.host);
  const timer = setTimeout(() => sock.destroy(new Error('VNC probe timed out')), timeoutMs);
  try {
    return { ok: true, ...(await vncHandshake(sock, byteReader(sock), password)) };
  } catch (err) {
    if (err instanceof VncRefusedError) return { ok: false, securityTypes: err.securityTypes, reason: err.message };
    throw err;
  } finally {
    clearTimeout(timer);
    sock.destroy();
  }
}
