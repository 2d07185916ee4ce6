export function getCookie(name: string): string | undefined {
  const prefix = `${name}=`;
  for (const part of document.cookie.split(';')) {
    const c = part.trim();
    if (c.startsWith(prefix)) return decodeURIComponent(c.slice(prefix.length));
  }
  return undefined;
}

export function setCookie(name: string, value: string, maxAgeSeconds?: number) {
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  const age = maxAgeSeconds !== undefined ? `; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}` : '';
  document.cookie = `${name}=${encodeURIComponent(value)}; Path=/; SameSite=Strict${age}${secure}`;
}

export function removeCookie(name: string) {
  document.cookie = `${name}=; Path=/; Max-Age=0; SameSite=Strict`;
}
