/**
 * `load` until it succeeds, tried again after each of `delays` when it fails with an error `again` accepts
 * (every error by default); the last failure when none succeeds. `what` names it in the console.
 */
export async function withRetries<T>(load: () => Promise<T>, delays: readonly number[], opts: { what: string; again?: (err: unknown) => boolean }): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await load();
    } catch (err) {
      if (attempt >= delays.length || (opts.again && !opts.again(err))) throw err;
      console.warn(`${opts.what} did not load; trying again`, err);
      await new Promise((r) => setTimeout(r, delays[attempt]));
    }
  }
}
