import { describe, expect, it } from 'vitest';
import { deadLabBridges } from './lab';

const addresses = [
  '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever',
  '812: vdilabp1x9k    inet 10.232.44.1/24 scope global vdilabp1x9k\\       valid_lft forever preferred_lft forever',
  '830: vdilabq2    inet 10.232.44.1/24 scope global vdilabq2\\       valid_lft forever preferred_lft forever',
  '840: vdilabr3    inet 10.232.45.1/24 scope global vdilabr3\\       valid_lft forever preferred_lft forever',
  '850: eth0    inet 10.232.44.1/24 scope global eth0\\       valid_lft forever preferred_lft forever',
].join('\n');

describe("a lab's start on a subnet", () => {
  it('finds the bridges of dead labs on it (no namespace of their hosts left), not a live one, another subnet or another link', () => {
    const namespaces = 'vdilab-q2-1 (id: 3)\nvdilab-q2-2 (id: 4)\nvdi-1234abcd (id: 0)\n';
    expect(deadLabBridges(addresses, namespaces, '10.232.44')).toEqual(['vdilabp1x9k']);
    expect(deadLabBridges(addresses, '', '10.232.44')).toEqual(['vdilabp1x9k', 'vdilabq2']);
    expect(deadLabBridges(addresses, '', '10.232.46')).toEqual([]);
  });
});
