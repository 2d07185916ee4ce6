/** The stock picture of a person without a photo: a hash of the user name modulo 48 (spec 001 §9). */
export function avatarIndex(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return (Math.abs(h) % 48) + 1;
}

export const avatarUrl = (user: { photo: string; username: string }) =>
  user.photo || `/assets/img/desktops/stock/${avatarIndex(user.username)}.jpg`;
