// The RDP doors' encoders and parsers: RDCleanPath (DER), the Client Info PDU's auto-logon flag,
// MS-TSGU packets, websocket frames, the gateway's request head and channel check, the bitmap crop.
import { describe, expect, it } from 'vitest';
import { integer, readTlv, tlvSize } from './der';
import { decodeAnswer, decodeRequest, encodeError, encodeRequest, encodeResponse, RDCLEANPATH_VERSION, requestSize } from './rdcleanpath';
import { autologonRewriter, clientInfoFlagsOffset, INFO_AUTOLOGON, tpktSize } from './rdp-frames';
import {
  channelResponse, client, closePacket, dataPackets, handshakeResponse, HRESULT, packet, packetReader, parseChannelCreate, parseData,
  parseHandshakeRequest, parseTunnelAuth, parseTunnelCreate, PKT, statusOf, tunnelResponse,
} from './tsgu';
import { acceptValue, frame, frameReader, OPCODE } from './ws-frames';
import { channelAllowed, parseHead } from './gateway';
import { cropBitmapUpdate, fixSlowPathPdu, serverOutputFixer } from './bitmap-fix';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('DER', () => {
  it('writes minimal integers and definite lengths, short and long', () => {
    expect(integer(3390)).toEqual(hex('02 02 0d 3e'));
    expect(integer(0)).toEqual(hex('02 01 00'));
    expect(integer(128)).toEqual(hex('02 02 00 80'));
    expect(tlvSize(hex('30 81 80'))).toBe(3 + 128);
    expect(tlvSize(hex('30 82 01 00'))).toBe(4 + 256);
    expect(tlvSize(hex('30'))).toBeNull();
  });
  it('refuses indefinite, over-long and non-minimal lengths', () => {
    expect(() => tlvSize(hex('30 80'))).toThrow();
    expect(() => tlvSize(hex('30 84 00 00 00 01'))).toThrow();
    expect(() => tlvSize(hex('30 81 05'))).toThrow();
    expect(() => readTlv(hex('04 05 01 02'))).toThrow(/truncated/);
  });
});

describe('RDCleanPath', () => {
  const x224 = hex('03 00 00 13 0e e0 00 00 00 00 00 01 00 08 00 0b 00 00 00');
  it('reads the request the web client writes (version, destination, token, X.224), in any message split', () => {
    const pdu = encodeRequest({ destination: '10.2.0.5:3389', proxyAuth: 'tok', x224 });
    expect(pdu[0]).toBe(0x30);
    expect(requestSize(pdu.subarray(0, 3))).toBe(pdu.length);
    expect(decodeRequest(pdu)).toEqual({ version: RDCLEANPATH_VERSION, destination: '10.2.0.5:3389', proxyAuth: 'tok', preconnectionBlob: undefined, x224 });
  });
  it('refuses what is not one request: another tag, a field twice, trailing bytes, no X.224', () => {
    expect(() => requestSize(hex('31 00'))).toThrow();
    const pdu = encodeRequest({ proxyAuth: 'tok', x224 });
    expect(() => decodeRequest(Buffer.concat([pdu, hex('00')]))).toThrow();
    expect(() => decodeRequest(hex('30 0c a0 04 02 02 0d 3e a0 04 02 02 0d 3e'))).toThrow(/repeated/);
    expect(() => decodeRequest(hex('30 06 a0 04 02 02 0d 3e'))).toThrow(/X.224/);
  });
  it('answers success (confirm, certificate chain, address) and errors the client decodes', () => {
    const ok = decodeAnswer(encodeResponse({ x224: hex('03 00 00 0b 06 d0 00 00 12 34 00'), certChain: [hex('3003020101')], serverAddr: '10.2.0.5:3389' }));
    expect(ok).toEqual({ x224: hex('03 00 00 0b 06 d0 00 00 12 34 00'), certChain: [hex('3003020101')], serverAddr: '10.2.0.5:3389' });
    expect(decodeAnswer(encodeError({ code: 1, httpStatus: 401 })).error).toEqual({ code: 1, httpStatus: 401 });
    expect(decodeAnswer(encodeError({ code: 1, httpStatus: 502, wsaError: 10061 })).error).toEqual({ code: 1, httpStatus: 502, wsaError: 10061 });
    expect(decodeAnswer(encodeError({ code: 2 }, x224))).toMatchObject({ error: { code: 2 }, x224 });
  });
});

/** A Client Info PDU as IronRDP sends it over TLS: TPKT, X.224 data, MCS SDrq, security header, TS_INFO_PACKET. */
function clientInfoPdu(flags: number, longLength = true) {
  const info = Buffer.alloc(4 + 4 + 40);
  info.writeUInt32LE(0, 0);
  info.writeUInt32LE(flags, 4);
  const sec = hex('40 00 00 00');
  const body = Buffer.concat([sec, info]);
  const len = longLength ? Buffer.from([0x80 | (body.length >> 8), body.length & 0xff]) : Buffer.from([body.length]);
  const mcs = Buffer.concat([hex('64 00 06 03 eb 70'), len, body]);
  const pdu = Buffer.concat([hex('03 00 00 00 02 f0 80'), mcs]);
  pdu.writeUInt16BE(pdu.length, 2);
  return pdu;
}

describe('auto-logon in the Client Info PDU', () => {
  it('finds the flags and sets INFO_AUTOLOGON, whatever the messages’ split', () => {
    const pdu = clientInfoPdu(0x4000b);
    const at = clientInfoFlagsOffset(pdu);
    expect(pdu.readUInt32LE(at)).toBe(0x4000b);
    const other = hex('03 00 00 0c 02 f0 80 38 00 06 03 eb'); // an MCS attach user request, passed as is
    const r = autologonRewriter();
    const stream = Buffer.concat([other, pdu, hex('44 05 01 02 03')]);
    const out = Buffer.concat([r.push(stream.subarray(0, 5)), r.push(stream.subarray(5, 30)), r.push(stream.subarray(30))]);
    expect(out.length).toBe(stream.length);
    expect(out.readUInt32LE(other.length + at) & INFO_AUTOLOGON).toBe(INFO_AUTOLOGON);
    expect(r.done).toBe(true);
    expect(r.push(hex('01 02'))).toEqual(hex('01 02'));
    expect(clientInfoFlagsOffset(clientInfoPdu(0, false))).toBeGreaterThan(0);
  });
  it('leaves alone what is not a Client Info PDU, and stops looking at fast-path input', () => {
    expect(clientInfoFlagsOffset(hex('03 00 00 0c 02 f0 80 38 00 06 03 eb'))).toBe(-1);
    const r = autologonRewriter();
    expect(r.push(hex('44 05 00 00 00'))).toEqual(hex('44 05 00 00 00'));
    expect(r.done).toBe(true);
    expect(() => tpktSize(hex('03 00 00 02'))).toThrow();
  });
});

describe('MS-TSGU packets', () => {
  it('parse what FreeRDP sends: handshake, tunnel with the PAA cookie, tunnel auth, channel', () => {
    const read = packetReader();
    const all = Buffer.concat([client.handshake(), client.tunnelCreate('the-token'), client.tunnelAuth('laptop'), client.channelCreate('10.2.0.5', 3389)]);
    const packets = [...read(all.subarray(0, 7)), ...read(all.subarray(7))];
    expect(packets.map((p) => p.type)).toEqual([PKT.handshakeRequest, PKT.tunnelCreate, PKT.tunnelAuth, PKT.channelCreate]);
    expect(parseHandshakeRequest(packets[0]!.body)).toEqual({ verMajor: 1, verMinor: 0, clientVersion: 0, extendedAuth: 2 });
    expect(parseTunnelCreate(packets[1]!.body).paaCookie).toBe('the-token');
    expect(parseTunnelAuth(packets[2]!.body).clientName).toBe('laptop');
    expect(parseChannelCreate(packets[3]!.body)).toEqual({ resources: ['10.2.0.5'], altResources: [], port: 3389, protocol: 3 });
  });
  it('refuse bad lengths and truncated bodies', () => {
    expect(() => packetReader()(hex('01 00 00 00 04 00 00 00'))).toThrow();
    expect(() => packetReader()(hex('01 00 00 00 00 00 10 00'))).toThrow();
    expect(() => parseChannelCreate(hex('01 00 3d 0d 03 00 10 00 31'))).toThrow(/truncated/);
  });
  it('write the gateway’s answers with their status codes', () => {
    const [hs, tun, ch, refused] = packetReader()(Buffer.concat([handshakeResponse(0, 2), tunnelResponse(0, 1), channelResponse(0, 1), channelResponse(HRESULT.rapAccessDenied)]));
    expect(hs!.body.readUInt16LE(8)).toBe(2);
    expect(statusOf(tun!)).toBe(0);
    expect(statusOf(ch!)).toBe(0);
    expect(ch!.body.readUInt32LE(8)).toBe(1);
    expect(statusOf(refused!)).toBe(HRESULT.rapAccessDenied);
    expect(packet(PKT.keepalive, Buffer.alloc(0))).toEqual(hex('0d 00 00 00 08 00 00 00'));
    expect(closePacket(PKT.closeChannelResponse).length).toBe(12);
  });
  it('split data into packets under 64 KB and read them back', () => {
    const bytes = Buffer.alloc(150_000, 7);
    const packets = packetReader()(Buffer.concat(dataPackets(bytes)));
    expect(packets.length).toBe(3);
    expect(Buffer.concat(packets.map((p) => parseData(p.body)))).toEqual(bytes);
  });
});

describe('websocket frames and the gateway’s request', () => {
  it('accepts FreeRDP’s non-base64 key as it is (RFC 6455 accept value)', () => {
    expect(acceptValue('dGhlIHNhbXBsZSBub25jZQ==')).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
    expect(acceptValue('SV[TLT\\M[XOXYWH')).toMatch(/^[A-Za-z0-9+/]{27}=$/);
  });
  it('unmasks client frames across chunks (7, 16 and 64-bit lengths) and refuses unmasked ones', () => {
    const mask = hex('01 02 03 04');
    const payloads = [Buffer.from('hi'), Buffer.alloc(300, 1), Buffer.alloc(70_000, 2)];
    const wire = Buffer.concat(payloads.map((p) => frame(OPCODE.binary, p, mask)));
    const read = frameReader();
    const frames = [...read(wire.subarray(0, 100)), ...read(wire.subarray(100))];
    expect(frames.map((f) => f.payload)).toEqual(payloads);
    expect(() => frameReader()(frame(OPCODE.binary, Buffer.from('x')))).toThrow(/masked/);
    expect(() => frameReader({ max: 10 })(frame(OPCODE.binary, Buffer.alloc(11), mask))).toThrow(/large/);
  });
  it('reads the RDG request head and only lets a channel to the token’s endpoint', () => {
    const head = parseHead('RDG_OUT_DATA /remoteDesktopGateway/ HTTP/1.1\r\nUpgrade: websocket\r\nSec-Websocket-Key: abc');
    expect(head).toMatchObject({ method: 'RDG_OUT_DATA', path: '/remoteDesktopGateway/' });
    expect(head.headers.get('sec-websocket-key')).toBe('abc');
    expect(() => parseHead('GET / HTTP/2')).toThrow();
    const target = { host: '10.2.0.5', port: 3389 };
    expect(channelAllowed({ resources: ['10.2.0.5'], altResources: [], port: 3389 }, target)).toBe(true);
    expect(channelAllowed({ resources: ['10.2.0.6'], altResources: [], port: 3389 }, target)).toBe(false);
    expect(channelAllowed({ resources: ['10.2.0.5'], altResources: [], port: 22 }, target)).toBe(false);
    expect(channelAllowed({ resources: ['10.2.0.5'], altResources: ['127.0.0.1'], port: 3389 }, target)).toBe(false);
    expect(channelAllowed({ resources: [], altResources: [], port: 3389 }, target)).toBe(false);
  });
});

/** A TS_UPDATE_BITMAP_DATA with one uncompressed 16 bpp bitmap `width` wide for a rectangle `dw` wide. */
function bitmapUpdate(dw: number, width: number, height: number) {
  const Bpp = 2;
  const stride = width * Bpp;
  const data = Buffer.alloc(stride * height);
  for (let r = 0; r < height; r++) for (let c = 0; c < width; c++) data.writeUInt16LE(c < dw ? r * 100 + c : 0xdead, r * stride + c * 2);
  const head = Buffer.alloc(18);
  [10, 20, 10 + dw - 1, 20 + height - 1, width, height, 16, 0, data.length].forEach((v, i) => head.writeUInt16LE(v, i * 2));
  return Buffer.concat([hex('01 00 01 00'), head, data]);
}

describe('cropping xrdp’s padded bitmaps for the web client', () => {
  it('crops each row to the rectangle (rows kept 4-byte aligned) and fixes the lengths', () => {
    const out = cropBitmapUpdate(bitmapUpdate(6, 8, 3));
    expect(out.readUInt16LE(4 + 8)).toBe(6); // width
    expect(out.readUInt16LE(4 + 16)).toBe(6 * 2 * 3); // bitmapLength
    const data = out.subarray(4 + 18);
    for (let r = 0; r < 3; r++) for (let c = 0; c < 6; c++) expect(data.readUInt16LE(r * 12 + c * 2)).toBe(r * 100 + c);
    const odd = cropBitmapUpdate(bitmapUpdate(5, 8, 2)); // 10 bytes a row, kept at 12
    expect(odd.readUInt16LE(4 + 16)).toBe(12 * 2);
  });
  it('leaves bitmaps that fit, and compressed ones, untouched', () => {
    const fits = bitmapUpdate(8, 8, 2);
    expect(cropBitmapUpdate(fits)).toBe(fits);
    const compressed = bitmapUpdate(6, 8, 2);
    compressed.writeUInt16LE(1, 4 + 14);
    expect(cropBitmapUpdate(compressed)).toBe(compressed);
  });
  it('rewrites a slow-path Update PDU with all its lengths, across the stream’s chunks', () => {
    const update = bitmapUpdate(6, 8, 3);
    const share = Buffer.alloc(18);
    share.writeUInt16LE(18 + update.length, 0);
    share.writeUInt16LE(0x17, 2);
    share.writeUInt16LE(4 + update.length, 12);
    share[14] = 2;
    const body = Buffer.concat([share, update]);
    const pdu = Buffer.concat([hex('03 00 00 00 02 f0 80 68 00 01 03 eb 70'), Buffer.from([0x80 | (body.length >> 8), body.length & 0xff]), body]);
    pdu.writeUInt16BE(pdu.length, 2);
    const fixed = fixSlowPathPdu(pdu);
    const removed = 3 * 2 * 2;
    expect(fixed.length).toBe(pdu.length - removed);
    expect(fixed.readUInt16BE(2)).toBe(fixed.length);
    expect(fixed.readUInt16BE(13) & 0x7fff).toBe(body.length - removed);
    expect(fixed.readUInt16LE(15)).toBe(18 + update.length - removed);
    expect(fixed.readUInt16LE(15 + 12)).toBe(4 + update.length - removed);
    const fix = serverOutputFixer();
    const stream = Buffer.concat([pdu, pdu]);
    const out = Buffer.concat([fix(stream.subarray(0, 9)), fix(stream.subarray(9, pdu.length + 4)), fix(stream.subarray(pdu.length + 4))]);
    expect(out).toEqual(Buffer.concat([fixed, fixed]));
  });
});
