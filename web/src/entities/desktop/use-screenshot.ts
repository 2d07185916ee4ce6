import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { fetchScreenshotAt } from './api';

/**
 * A running desktop's screen as an object URL, read from `path` every `refreshMs` while `running`
 * (null while it is not, or when the read fails); each URL is revoked when the next replaces it.
 */
export function useScreenshotUrl(queryKey: readonly unknown[], path: string, running: boolean, refreshMs: number): string | null {
  const { data: blob } = useQuery({
    queryKey,
    queryFn: ({ signal }) => fetchScreenshotAt(path, signal).catch(() => null),
    enabled: running,
    refetchInterval: running ? refreshMs : false,
    staleTime: 0,
    gcTime: 0,
    retry: false,
  });
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!blob || !running) return setUrl(null);
    const u = URL.createObjectURL(blob);
    setUrl(u);
    return () => URL.revokeObjectURL(u);
  }, [blob, running]);
  return url;
}
