/**
 * The picture of a person without a photo: one of 48 (a hash of the user name modulo 48, spec 001 §9),
 * drawn as their initials on one of 48 hues, so that it needs no image files.
 */
export function avatarIndex(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return (Math.abs(h) % 48) + 1;
}

/** One of 48 hues, dark enough that the white initials on it reach 4.5:1 for every hue (WCAG AA). */
export const avatarColor = (username: string) => `hsl(${(avatarIndex(username) - 1) * 7.5}, 55%, 30%)`;

export const initials = (name: string) =>
  name
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((p) => p[0]!.toUpperCase())
    .join('');
