import type { RegisteredRoute } from '../../src/app';

/** The parts of a zod (v4) definition the samples read. */
type Def = {
  type: string;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  in?: unknown;
  element?: unknown;
  options?: unknown[];
  entries?: Record<string, string | number>;
  values?: unknown[];
  valueType?: unknown;
};
const defOf = (schema: unknown): Def | undefined => (schema as { _zod?: { def?: Def } } | undefined)?._zod?.def;

/**
 * A value of the schema's shape with every free string set to `text`: enums and literals take their first
 * value, numbers 1, booleans false. Used to send well-formed garbage (made-up ids, NUL in every text field).
 */
export function sampleOf(schema: unknown, text: string, depth = 0): unknown {
  const def = defOf(schema);
  if (!def || depth > 6) return text;
  switch (def.type) {
    case 'object':
      return Object.fromEntries(Object.entries(def.shape ?? {}).map(([k, v]) => [k, sampleOf(v, text, depth + 1)]));
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return sampleOf(def.innerType, text, depth + 1);
    case 'pipe':
      return sampleOf(def.in, text, depth + 1);
    case 'array':
      return [sampleOf(def.element, text, depth + 1)];
    case 'union':
      return sampleOf(def.options?.[0], text, depth + 1);
    case 'enum':
      return Object.values(def.entries ?? {})[0] ?? text;
    case 'literal':
      return def.values?.[0] ?? text;
    case 'record':
      return { key: sampleOf(def.valueType, text, depth + 1) };
    case 'number':
    case 'int':
      return 1;
    case 'boolean':
      return false;
    default:
      return text;
  }
}

/** The keys of an object schema (params, querystring), or none. */
export const keysOf = (schema: unknown): string[] => Object.keys(defOf(schema)?.type === 'object' ? (defOf(schema)!.shape ?? {}) : {});

/** The names of a URL pattern's parameters (`/desktop/:action/:id` → action, id; a `*` wildcard too). */
export const paramsOf = (url: string): string[] => [...url.matchAll(/:(\w+)|\*/g)].map((m) => m[1] ?? '*');

/**
 * The URL of a route with each parameter filled: `raw` values go in as they are (already percent-encoded or
 * deliberately malformed), the others are sample values of its params schema, encoded.
 */
export function pathOf(route: RegisteredRoute, raw: Record<string, string> = {}, text = 'bad-input'): string {
  const params = defOf(route.schema?.params)?.type === 'object' ? defOf(route.schema?.params)!.shape ?? {} : {};
  return route.url.replace(/:(\w+)|\*/g, (_m, name: string | undefined) => {
    const key = name ?? '*';
    if (raw[key] !== undefined) return raw[key]!;
    return encodeURIComponent(String(params[key] ? sampleOf(params[key], text) : text));
  });
}
