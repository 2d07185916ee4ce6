import type { TBrowserViewerTicket, TViewer, TViewerAnswer } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { ApiError, notFound, precondition } from '../../http/errors';
import type { DomainRow } from '../desktops/view';
import { viewersOf } from '../desktops/view';
import { spiceFile } from './files';
import { issueViewerToken, VIEWER_TOKEN_SECONDS, viewerPassword } from './tokens';

export const VIEWABLE = ['Started', 'WaitingIP', 'Shutting-down', 'Paused'];
const PASSWORD_SECONDS = 120;

/**
 * A viewer of a running desktop: a browser ticket (one-time token + VNC password) or a SPICE
 * file (one-time password that expires), never the session cookie alone.
 */
export async function viewerFor(ctx: AppContext, row: DomainRow, viewer: TViewer, opts: { userId: string | null; proxy: string }): Promise<TViewerAnswer> {
  if (!VIEWABLE.includes(row.status)) throw precondition('viewer_not_started', 'Start the desktop before opening a viewer');
  if (!viewersOf(row).includes(viewer)) throw notFound('unable_to_get_viewer', `The desktop does not offer ${viewer}`);
  const runtime = (await ctx.engine.driver.list()).find((m) => m.id === row.id);
  if (!runtime) throw precondition('viewer_not_started', 'The desktop is not running');

  if (viewer === 'browser-vnc') {
    const password = viewerPassword(8);
    await ctx.engine.driver.setViewerPassword(row.id, 'vnc', password, PASSWORD_SECONDS);
    const token = await issueViewerToken(ctx.db, row.id, opts.userId, 'vnc');
    const ticket: TBrowserViewerTicket = { token, password, name: row.name, desktopId: row.id };
    return {
      kind: 'browser',
      protocol: 'vnc',
      viewer: '/viewer/vnc',
      cookie: Buffer.from(JSON.stringify(ticket)).toString('base64url'),
      values: { vmName: row.name, exp: Math.floor(Date.now() / 1000) + VIEWER_TOKEN_SECONDS },
    };
  }
  if (viewer === 'file-spice') {
    if (!runtime.spice) throw notFound('unable_to_get_viewer', 'SPICE is not enabled on this desktop');
    const password = viewerPassword(16);
    await ctx.engine.driver.setViewerPassword(row.id, 'spice', password, PASSWORD_SECONDS);
    return {
      kind: 'file',
      protocol: 'spice',
      name: 'vdi-spice',
      ext: 'vv',
      mime: 'application/x-virt-viewer',
      content: spiceFile({
        proxy: opts.proxy,
        host: runtime.spice.host,
        port: runtime.spice.port,
        password,
        title: row.name,
        fullscreen: row.guestProperties.fullscreen,
      }),
    };
  }
  throw new ApiError('not_found', 'viewer_protocol_not_implemented', `${viewer} is not available on this server`);
}
