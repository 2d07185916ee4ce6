// Module resolution without Node's repeated package.json reads. For every module it resolves, Node reads the nearest
// package.json again and parses its `exports`, and drizzle-orm's is 179 KB: its 108 modules and the server's ~150
// imports of it cost ~2 s of CPU per process start and per test file (decision 0044). Two answers are kept instead:
// - a package's own relative import of a `.js`, `.mjs`, `.cjs` or `.json` file that exists (`./sql/sql.js` inside
//   drizzle-orm): the file, in the format its extension and its package's `type` (read once per directory) give;
// - a bare specifier (`drizzle-orm/pg-core`) asked again from the same directory with the same conditions: Node's
//   first answer there.
// Everything else, and every first answer, is Node's own.
import { readFileSync, realpathSync, statSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

type Format = 'module' | 'commonjs' | 'json';
type ResolveContext = { parentURL?: string; conditions?: readonly string[] };
type Resolved = { url: string; format?: string | null; shortCircuit?: boolean };
type Next = (specifier: string, context: ResolveContext) => Resolved;
type ResolveHook = (specifier: string, context: ResolveContext, next: Next) => Resolved;

const typeOfDir = new Map<string, 'module' | 'commonjs'>();

/** The `type` of the package a directory belongs to (its nearest package.json), each directory looked at once. */
function packageType(dir: string): 'module' | 'commonjs' {
  const known = typeOfDir.get(dir);
  if (known) return known;
  let type: 'module' | 'commonjs';
  try {
    type = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { type?: string }).type === 'module' ? 'module' : 'commonjs';
  } catch (err) {
    const parent = dirname(dir);
    type = (err as NodeJS.ErrnoException).code === 'ENOENT' && parent !== dir ? packageType(parent) : 'commonjs';
  }
  typeOfDir.set(dir, type);
  return type;
}

/** What Node answers for a package's relative import of an existing file, or null when Node's own resolution should decide. */
export function quickResolution(specifier: string, parentURL: string | undefined, conditions: readonly string[] | undefined): { url: string; format: Format } | null {
  if (!parentURL?.startsWith('file:') || !parentURL.includes('/node_modules/') || !conditions?.includes('import')) return null;
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return null;
  const ext = extname(specifier.split(/[?#]/)[0]!);
  if (ext !== '.js' && ext !== '.mjs' && ext !== '.cjs' && ext !== '.json') return null;
  let file: string;
  try {
    file = fileURLToPath(new URL(specifier, parentURL));
    if (!statSync(file).isFile()) return null;
    file = realpathSync(file);
  } catch {
    return null;
  }
  const format: Format = ext === '.json' ? 'json' : ext === '.mjs' ? 'module' : ext === '.cjs' ? 'commonjs' : packageType(dirname(file));
  return { url: pathToFileURL(file).href, format };
}

const isBare = (specifier: string) => !/^(\.{0,2}\/|[a-z][a-z0-9+.-]*:)/i.test(specifier);

/** A resolve hook with the two answers above (its own cache of bare specifiers); `next` is Node's resolution. */
export function quickResolver(): ResolveHook {
  const bare = new Map<string, Resolved>();
  return (specifier, context, next) => {
    const quick = quickResolution(specifier, context.parentURL, context.conditions);
    if (quick) return { ...quick, shortCircuit: true };
    if (!context.parentURL?.startsWith('file:') || !isBare(specifier)) return next(specifier, context);
    const key = `${dirname(context.parentURL)}\0${specifier}\0${context.conditions?.join(',') ?? ''}`;
    const known = bare.get(key);
    if (known) return known;
    const answer = next(specifier, context);
    if (answer.url.startsWith('file:')) bare.set(key, { ...answer, shortCircuit: true });
    return answer;
  };
}

/** Node's synchronous module hooks (22.15 and later; the installed types may not name them yet). */
const { registerHooks } = nodeModule as unknown as { registerHooks?: (hooks: { resolve: ResolveHook }) => unknown };

let registered = false;
/** Registers the resolution above for this thread's later imports and requires (once; a Node without synchronous hooks keeps its own). */
export function useQuickResolve() {
  if (registered || !registerHooks) return;
  registered = true;
  registerHooks({ resolve: quickResolver() });
}
