/**
 * SAML 2.0 for sign-in (the service provider's side), on `samlify`: our SP (entity id, ACS, SLO, its signing
 * key pair), the IdP from its metadata, the AuthnRequest by the redirect binding, the checks of a Response
 * (signature, schema, issuer, audience, times, recipient) and logout both ways. Messages are validated against
 * the SAML schemas by xmllint compiled to JavaScript (node-xmllint: nothing native, nothing downloaded).
 * No database here: the rules (who the person is, replays, flows) are in modules/identity/saml.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { IdentityProviderInstance, ServiceProviderInstance } from 'samlify';
import { runProgram, type ProgramFailure } from '../host/programs';

/** How far the IdP's clock may be from ours (NotBefore, NotOnOrAfter). */
export const CLOCK_ALLOWANCE_MS = 120_000;
/** How long fetching an IdP's metadata may take. */
export const METADATA_TIMEOUT_MS = 5_000;
const METADATA_MAX_BYTES = 1_000_000;

// samlify is CommonJS whose exports Node's ESM loader cannot all name (some are getters): loaded as one object.
const require = createRequire(import.meta.url);
const { Constants, Extractor, IdentityProvider, SamlLib, ServiceProvider, setSchemaValidator } = require('samlify') as typeof import('samlify');

export const NAMEID_TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';
const NAMEID_UNSPECIFIED = 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified';

// ------------------------------------------------------------------------------------------ schema validation
type Xmllint = { validateXML(opts: { xml: string; schema: string[] }): { errors: string[] | null } };
let schemas: string[] | undefined;
let xmllint: Xmllint | undefined;

/**
 * Every message is checked against the SAML 2.0 protocol and assertion schemas (samlify refuses to parse without a
 * validator). Loaded on first use (xmllint compiled to JavaScript is 4 MB); its messages are not printed: they may
 * quote the message's content.
 */
function validateSchema(xml: string): Promise<string> {
  if (!xmllint || !schemas) {
    xmllint = require('node-xmllint') as Xmllint;
    const base = '@authenio/samlify-node-xmllint/build/schemas/';
    const load = (name: string) => (require(`${base}${name}`) as { default: string }).default;
    // xmllint runs in a virtual file system: the schemas import each other as file_<index>.xsd.
    schemas = [
      load('saml-schema-assertion-2.0.xsd').replace('xmldsig-core-schema.xsd', 'file_1.xsd').replace('xenc-schema.xsd', 'file_2.xsd'),
      load('xmldsig-core-schema.xsd'),
      load('xenc-schema.xsd').replace('xmldsig-core-schema.xsd', 'file_1.xsd'),
      load('saml-schema-protocol-2.0.xsd').replace('saml-schema-assertion-2.0.xsd', 'file_0.xsd').replace('xmldsig-core-schema.xsd', 'file_1.xsd'),
    ];
  }
  // The compiled xmllint writes a line to stdout on each run; the log is not written through process.stdout.write.
  const write = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  let errors: string[] | null;
  try {
    errors = xmllint.validateXML({ xml, schema: schemas }).errors;
  } finally {
    process.stdout.write = write;
  }
  return errors ? Promise.reject(new Error('ERR_EXCEPTION_VALIDATE_XML')) : Promise.resolve('SUCCESS_VALIDATE_XML');
}
setSchemaValidator({ validate: validateSchema });

// ------------------------------------------------------------------------------------------ our key pair
export type KeyPair = { key: string; cert: string };

/** A key pair kept as one PEM text: the private key and its certificate (an admin may bring their own so). */
export function parseKeyPair(pem: string | null): KeyPair | null {
  if (!pem) return null;
  const key = /-----BEGIN (?:RSA )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA )?PRIVATE KEY-----/.exec(pem)?.[0];
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
  return key && cert ? { key, cert } : null;
}

/** A new RSA key and a self-signed certificate for ten years (openssl, as the RD Gateway's), as one PEM text. */
export async function generateKeyPair(commonName: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'saml-sp-'));
  try {
    const cn = commonName.replace(/[^A-Za-z0-9.:-]/g, '').slice(0, 60) || 'vdi-saml-sp';
    await runProgram('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '3650', '-sha256',
      '-subj', `/CN=${cn}`, '-keyout', join(dir, 'sp.key'), '-out', join(dir, 'sp.crt'),
    ]).catch((f: ProgramFailure) => {
      throw new Error(`openssl could not make the SAML key pair: ${f.stderr.trim().slice(0, 200) || `exit ${f.code}`}`);
    });
    return `${readFileSync(join(dir, 'sp.key'), 'utf8').trim()}\n${readFileSync(join(dir, 'sp.crt'), 'utf8').trim()}\n`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------------------------------ entities
/** Our SP's addresses, all from the configured public address. The entity id is the metadata's address. */
export type SpUrls = { entityId: string; acs: string; slo: string; metadata: string };

export function serviceProvider(urls: SpUrls, keys: KeyPair): ServiceProviderInstance {
  return ServiceProvider({
    entityID: urls.entityId,
    privateKey: keys.key,
    signingCert: keys.cert,
    authnRequestsSigned: true,
    wantAssertionsSigned: true,
    wantLogoutRequestSigned: true,
    wantLogoutResponseSigned: true,
    requestSignatureAlgorithm: Constants.algorithms.signature.RSA_SHA256,
    nameIDFormat: [NAMEID_UNSPECIFIED],
    assertionConsumerService: [{ Binding: Constants.namespace.binding.post, Location: urls.acs }],
    singleLogoutService: [
      { Binding: Constants.namespace.binding.redirect, Location: urls.slo },
      { Binding: Constants.namespace.binding.post, Location: urls.slo },
    ],
    clockDrifts: [-CLOCK_ALLOWANCE_MS, CLOCK_ALLOWANCE_MS],
  });
}

/** The IdP from its metadata (throws on metadata that is not an IdP's). */
export function identityProvider(metadataXml: string): IdentityProviderInstance {
  const idp = IdentityProvider({ metadata: metadataXml, wantLogoutRequestSigned: true, wantLogoutResponseSigned: true });
  if (!idp.entityMeta.getEntityID()) throw new Error('The IdP metadata has no entityID');
  const certs = [idp.entityMeta.getX509Certificate('signing')].flat().filter(Boolean);
  if (certs.length === 0) throw new Error('The IdP metadata has no signing certificate');
  return idp;
}

/** The IdP's metadata from its address, within a bounded time and size. */
export async function fetchMetadata(url: string, timeoutMs = METADATA_TIMEOUT_MS): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow', headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } });
  if (!res.ok) throw new Error(`The IdP metadata address answered ${res.status}`);
  const text = await res.text();
  if (text.length > METADATA_MAX_BYTES) throw new Error('The IdP metadata is too large');
  return text;
}

// ------------------------------------------------------------------------------------------ sign-in
/** The AuthnRequest as the IdP's redirect address, and its ID (the Response's InResponseTo). */
export function loginRequest(sp: ServiceProviderInstance, idp: IdentityProviderInstance): { id: string; url: string } {
  const { id, context } = sp.createLoginRequest(idp, 'redirect');
  return { id, url: context };
}

/** A Response refused, with why (a short word for the log; never the message itself). */
export class SamlRefused extends Error {
  constructor(readonly reason: string) {
    super(`SAML message refused: ${reason}`);
  }
}

export type SamlAssertion = {
  assertionId: string;
  /** The AuthnRequest this answers (from the signed assertion when it says, else the Response). */
  inResponseTo: string;
  nameId: string;
  nameIdFormat: string;
  sessionIndex?: string;
  /** Until when the assertion may be used (its replay is remembered that long). */
  notOnOrAfter: Date;
  attributes: Record<string, string[]>;
};

const list = (v: unknown): string[] => (v === undefined || v === null ? [] : (Array.isArray(v) ? v : [v]).map(String));
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** samlify's errors as short reasons for the log. */
function reasonOf(err: unknown): string {
  const m = (err as Error)?.message ?? String(err);
  if (/SIGNATURE|CERTIFICATE|WRAPPING/i.test(m)) return 'signature';
  if (/VALIDATE_XML|INVALID_XML/i.test(m)) return 'schema';
  if (/UNMATCH_ISSUER/.test(m)) return 'issuer';
  if (/SUBJECT_UNCONFIRMED|EXPIRED_SESSION/.test(m)) return 'expired';
  if (/FAILED_STATUS/.test(m)) return 'status';
  return 'unreadable';
}

/**
 * A POSTed Response checked: signed (the Response or its assertion) by the IdP's key, valid against the schemas,
 * issued by the IdP, for our entity id, within its times (with the clock allowance), to our ACS; throws SamlRefused.
 */
export async function readLoginResponse(
  sp: ServiceProviderInstance,
  idp: IdentityProviderInstance,
  samlResponse: string,
  urls: SpUrls,
): Promise<SamlAssertion> {
  let content: string;
  let extract: Record<string, unknown>;
  try {
    const parsed = await sp.parseLoginResponse(idp, 'post', { body: { SAMLResponse: samlResponse } });
    content = parsed.samlContent;
    extract = parsed.extract as Record<string, unknown>;
  } catch (err) {
    throw new SamlRefused(reasonOf(err));
  }
  // The assertion as signed: what is read from here on comes from it (not from elements an attacker could add).
  let verified: string | null;
  try {
    verified = SamlLib.verifySignature(content, { metadata: idp.entityMeta, signatureAlgorithm: idp.entitySetting.requestSignatureAlgorithm })[1];
  } catch {
    verified = null;
  }
  if (!verified || !/Assertion/.test(verified.slice(0, 200))) throw new SamlRefused('unsigned-assertion');
  const more = Extractor.extract(verified, [
    { key: 'assertionId', localPath: ['Assertion'], attributes: ['ID'] },
    { key: 'confirmation', localPath: ['Assertion', 'Subject', 'SubjectConfirmation', 'SubjectConfirmationData'], attributes: ['InResponseTo', 'Recipient', 'NotOnOrAfter'] },
    { key: 'nameIdFormat', localPath: ['Assertion', 'Subject', 'NameID'], attributes: ['Format'] },
  ]) as Record<string, unknown>;
  const assertionId = str(more.assertionId);
  if (!assertionId) throw new SamlRefused('no-assertion-id');

  if (!list(extract.audience).includes(urls.entityId)) throw new SamlRefused('audience');
  const conditions = (extract.conditions ?? {}) as Record<string, unknown>;
  const confirmation = (more.confirmation ?? {}) as Record<string, unknown>;
  const now = Date.now();
  const notOnOrAfter = [str(conditions.notOnOrAfter), str(confirmation.notOnOrAfter)].filter(Boolean).map((t) => new Date(t));
  // An assertion without an end is not taken: its replay could not be bounded.
  if (notOnOrAfter.length === 0 || notOnOrAfter.some((t) => Number.isNaN(t.getTime()))) throw new SamlRefused('no-validity');
  if (notOnOrAfter.some((t) => now >= t.getTime() + CLOCK_ALLOWANCE_MS)) throw new SamlRefused('expired');
  const notBefore = str(conditions.notBefore);
  if (notBefore && now + CLOCK_ALLOWANCE_MS < new Date(notBefore).getTime()) throw new SamlRefused('not-yet-valid');
  const recipient = str(confirmation.recipient);
  if (recipient && recipient !== urls.acs) throw new SamlRefused('recipient');
  const response = (extract.response ?? {}) as Record<string, unknown>;
  const destination = str(response.destination);
  if (destination && destination !== urls.acs) throw new SamlRefused('destination');

  const confirmed = str(confirmation.inResponseTo);
  const answered = str(response.inResponseTo);
  if (confirmed && answered && confirmed !== answered) throw new SamlRefused('in-response-to');
  const inResponseTo = confirmed || answered;
  if (!inResponseTo) throw new SamlRefused('unsolicited');

  const nameId = str(extract.nameID);
  if (!nameId) throw new SamlRefused('no-name-id');
  const session = (extract.sessionIndex ?? {}) as Record<string, unknown>;
  const attributes = Object.fromEntries(Object.entries((extract.attributes ?? {}) as Record<string, unknown>).map(([k, v]) => [k, list(v)]));
  return {
    assertionId,
    inResponseTo,
    nameId,
    nameIdFormat: str(more.nameIdFormat) || NAMEID_UNSPECIFIED,
    sessionIndex: str(session.sessionIndex) || undefined,
    notOnOrAfter: new Date(Math.min(...notOnOrAfter.map((t) => t.getTime()))),
    attributes,
  };
}

// ------------------------------------------------------------------------------------------ logout
/** Our LogoutRequest for a session the IdP opened, as the IdP's redirect address (signed). */
export function logoutRequest(
  sp: ServiceProviderInstance,
  idp: IdentityProviderInstance,
  session: { nameId: string; nameIdFormat?: string; sessionIndex?: string },
): { id: string; url: string } {
  const format = session.nameIdFormat || NAMEID_UNSPECIFIED;
  const { id, context } = sp.createLogoutRequest(idp, 'redirect', { logoutNameID: session.nameId, sessionIndex: session.sessionIndex }, {
    customTagReplacement: ((template: string, tags: Record<string, string>) => ({
      id: tags.ID!,
      context: SamlLib.replaceTagsByValue(
        session.sessionIndex ? template : template.replace(/<samlp:SessionIndex>\{SessionIndex\}<\/samlp:SessionIndex>/, ''),
        { ...tags, NameIDFormat: format },
      ),
    })) as unknown as (template: string) => { id: string; context: string },
  });
  return { id, url: context };
}

/** The raw query string's parts a redirect binding's signature covers, in their order and encoding. */
export function signedOctets(rawQuery: string, param: 'SAMLRequest' | 'SAMLResponse'): string {
  const parts = new Map(rawQuery.split('&').map((p) => [p.split('=')[0]!, p] as const));
  return [parts.get(param), parts.get('RelayState'), parts.get('SigAlg')].filter(Boolean).join('&');
}

export type LogoutMessage =
  | { kind: 'request'; id: string; nameId: string; sessionIndex?: string; requestInfo: { extract: Record<string, unknown> } }
  | { kind: 'response'; inResponseTo: string; success: boolean };

/**
 * A message to our SLO from the IdP: its LogoutRequest (the IdP ends the person's session) or its LogoutResponse
 * to ours; signed (redirect: the query's signature; POST: the XML's). Throws SamlRefused.
 */
export async function readLogoutMessage(
  sp: ServiceProviderInstance,
  idp: IdentityProviderInstance,
  binding: 'redirect' | 'post',
  fields: { SAMLRequest?: string; SAMLResponse?: string; RelayState?: string; SigAlg?: string; Signature?: string },
  rawQuery: string,
): Promise<LogoutMessage> {
  const param = fields.SAMLRequest ? 'SAMLRequest' : 'SAMLResponse';
  const request = binding === 'redirect' ? { query: fields, octetString: signedOctets(rawQuery, param) } : { body: fields };
  if (param === 'SAMLRequest') {
    let parsed: { extract: Record<string, unknown> };
    try {
      parsed = (await sp.parseLogoutRequest(idp, binding, request)) as unknown as { extract: Record<string, unknown> };
    } catch (err) {
      throw new SamlRefused(reasonOf(err));
    }
    const x = parsed.extract;
    if (str(x.issuer) !== idp.entityMeta.getEntityID()) throw new SamlRefused('issuer');
    const nameId = str(x.nameID);
    if (!nameId) throw new SamlRefused('no-name-id');
    return { kind: 'request', id: str((x.request as Record<string, unknown> | undefined)?.id), nameId, sessionIndex: list(x.sessionIndex)[0], requestInfo: { extract: x } };
  }
  let parsed: { extract: Record<string, unknown> };
  try {
    parsed = (await sp.parseLogoutResponse(idp, binding, request)) as unknown as { extract: Record<string, unknown> };
  } catch (err) {
    // A LogoutResponse whose status is not success is still an answer.
    if (/FAILED_STATUS/.test((err as Error)?.message ?? '')) return { kind: 'response', inResponseTo: '', success: false };
    throw new SamlRefused(reasonOf(err));
  }
  return { kind: 'response', inResponseTo: str((parsed.extract.response as Record<string, unknown> | undefined)?.inResponseTo), success: true };
}

/** Our LogoutResponse to the IdP's LogoutRequest, as the IdP's redirect address (signed). */
export function logoutResponse(sp: ServiceProviderInstance, idp: IdentityProviderInstance, requestInfo: { extract: Record<string, unknown> }, relayState?: string): string {
  return sp.createLogoutResponse(idp, requestInfo as Parameters<ServiceProviderInstance['createLogoutResponse']>[1], 'redirect', relayState ? { relayState } : {}).context;
}
