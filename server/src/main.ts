// The server's entry (`npm start`, `node --import tsx server/src/main.ts`): packages' own imports resolved quickly
// (boot/quick-resolve.ts: ~1 s of CPU less per start), then the server (serve.ts), imported after so that its
// packages are resolved that way.
import { useQuickResolve } from './boot/quick-resolve';

useQuickResolve();
await import('./serve');
