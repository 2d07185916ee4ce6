import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpError } from './api';
import { queryClient, reportsError, setQueryErrorHandler } from './queries';

const gone = new HttpError(404, { error: 'not_found', msg: '', description_code: 'not_found', description: '', params: null }, new Headers());
const fail = (key: string, err: unknown, meta?: Parameters<typeof reportsError>[0]) =>
  queryClient.fetchQuery({ queryKey: ['test', key], queryFn: () => Promise.reject(err), meta }).catch(() => undefined);

describe('failures of queries', () => {
  afterEach(() => {
    setQueryErrorHandler(() => undefined);
    queryClient.clear();
  });

  it('reach the central handler once, unless the screen handles them', async () => {
    const seen = vi.fn();
    setQueryErrorHandler(seen);
    const boom = new Error('boom');
    await fail('plain', boom);
    expect(seen).toHaveBeenCalledTimes(1);
    expect(seen).toHaveBeenCalledWith(boom);

    await fail('own', new Error('shown by the screen'), { handlesError: true });
    expect(seen).toHaveBeenCalledTimes(1);
  });

  it('keep only what a per-query rule leaves to the handler', async () => {
    const seen = vi.fn();
    setQueryErrorHandler(seen);
    const isGone = (err: unknown) => err instanceof HttpError && err.status === 404;
    await fail('gone', gone, { handlesError: isGone });
    expect(seen).not.toHaveBeenCalled();
    const other = new Error('server down');
    await fail('other', other, { handlesError: isGone });
    expect(seen).toHaveBeenCalledWith(other);
  });

  it('are not wired page by page (one mechanism: the query cache)', () => {
    const src = join(import.meta.dirname, '..');
    const files = readdirSync(src, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name))
      .map((e) => join(e.parentPath, e.name));
    const effect = /useEffect\(\(\) => \{\s*(?:const \w+ = [^;]*error[^;]*;\s*)?if \([^)]*error[^)]*\) handleError\(/;
    expect(files.filter((f) => effect.test(readFileSync(f, 'utf8')))).toEqual([]);
  });
});
