import { z } from 'zod';
import { ZBastion, ZVpnConfig, type TBastion, type TBastionUpdate } from '@vdi/contracts';
import { api } from '../../lib/api';
import { downloadText } from '../../lib/download';
import { HANDLES_ERROR } from '../../lib/queries';

/** The user's WireGuard file, saved by the browser as isard-vpn.conf. */
export async function downloadVpnFile() {
  const file = await api.get('/user/vpn/config', ZVpnConfig);
  downloadText(file.content, file.mime || 'text/plain', `${file.name}.${file.ext}`);
}

export const resetVpn = () => api.put('/user/reset-vpn', {}, z.object({}).passthrough());

export const bastionQuery = (desktopId: string) => ({
  queryKey: ['bastion', desktopId],
  queryFn: (): Promise<TBastion> => api.get(`/desktop/bastion/${encodeURIComponent(desktopId)}`, ZBastion),
  meta: HANDLES_ERROR,
});

export const saveBastion = (desktopId: string, body: TBastionUpdate) => api.put(`/desktop/bastion/${encodeURIComponent(desktopId)}`, body, ZBastion);
