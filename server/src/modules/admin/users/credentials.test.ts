import { describe, expect, it } from 'vitest';
import { credentialsCsv } from './credentials';

describe('the credentials CSV', () => {
  const labels = { title: 'T', name: 'Nom', username: "Nom d'usuari", password: 'Contrasenya', address: 'Adreça', organisation: 'Organització', change_hint: 'h' };

  it('is UTF-8 with a byte-order mark, one line per person, CRLF ends', () => {
    const csv = credentialsCsv(
      [
        { name: 'Núria Puig, Jr.', username: 'npuig', password: 'k7Pm-x3Ta-9aRw', organisation: 'Escola "Sol"' },
        { name: '=HYPERLINK("x")', username: 'evil', password: 'Hc4e-Ty7n-Xw3d', organisation: '北京' },
      ],
      labels,
      'https://portal.example.edu/login',
    );
    expect(csv.startsWith('\uFEFF')).toBe(true);
    expect(Buffer.from(csv, 'utf8').subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(csv.slice(1).split('\r\n')).toEqual([
      "Nom,Nom d'usuari,Contrasenya,Adreça,Organització",
      '"Núria Puig, Jr.",npuig,k7Pm-x3Ta-9aRw,https://portal.example.edu/login,"Escola ""Sol"""',
      // A cell that would be a formula is made inert.
      `"'=HYPERLINK(""x"")",evil,Hc4e-Ty7n-Xw3d,https://portal.example.edu/login,北京`,
      '',
    ]);
  });
});
