import { describe, expect, it } from 'vitest';
import { csvCell, csvFile, csvRow } from './csv';

describe('CSV cells of the exports', () => {
  it('quotes what holds a separator, a quote or a line end', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('a;b')).toBe('"a;b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(3)).toBe('3');
    expect(csvCell({ a: 1 })).toBe('"{""a"":1}"');
  });

  it('makes every formula start inert: the cell start and each piece after a , or ;', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r']) {
      const v = csvCell(`${start}cmd`);
      expect(v.replace(/^"/, '').startsWith(`'${start}`)).toBe(true);
    }
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    // A spreadsheet that splits on ; (or on , ignoring quotes) sees each piece as a cell of its own.
    expect(csvCell('Ann;=1+1')).toBe(`"Ann;'=1+1"`);
    expect(csvCell('Ann,@SUM(A1)')).toBe(`"Ann,'@SUM(A1)"`);
    expect(csvCell('a;b,-2;+3')).toBe(`"a;b,'-2;'+3"`);
    // Split the written cell as such a spreadsheet would: no piece starts a formula.
    for (const value of ['x;=1', 'x,=1', '=a;=b,=c', 'a;\t=b', 'ok;;@x']) {
      const written = csvCell(value);
      for (const piece of written.split(/[,;]/)) expect(piece.replace(/^"/, '')).not.toMatch(/^[=+\-@\t\r]/);
    }
    // Starts elsewhere are left alone.
    expect(csvCell('a=b')).toBe('a=b');
    expect(csvCell('user@example.org')).toBe('user@example.org');
  });

  it('writes rows and files with CRLF line ends', () => {
    expect(csvRow(['a', 'b c', '=x'])).toBe("a,b c,'=x");
    expect(csvFile([['h1', 'h2'], ['1', '-1']])).toBe("h1,h2\r\n1,'-1\r\n");
  });
});
