// A free TCP port on `host`, found by letting the kernel pick one. QEMU then binds it: another
// process could take it in between, in which case the start fails with QEMU's bind error.
import { createServer } from 'node:net';

export function freeTcpPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error('no port'))));
    });
  });
}
