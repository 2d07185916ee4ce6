// A real directory for the tests: Debian's OpenLDAP `slapd` as its own process, with a throwaway cn=config
// (slapadd -n0: an mdb database, the memberOf overlay, TLS with a test CA and a server certificate made by
// openssl here) listening on ldap:// (StartTLS) and ldaps:// on 127.0.0.1, and a small directory:
// a teacher (cn=teachers), a student (cn=students), a person in no group, a disabled person (employeeType
// disabled: the providers' filters exclude it) and the portal's bind account. `slapdMissing()` says what
// this host lacks.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './wait';

const SLAPD_PROGRAMS = ['slapd', 'slapadd', 'ldapsearch', 'ldapadd', 'ldapmodify', 'openssl'];
const onPath = (name: string) => [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/usr/sbin'].some((d) => d && existsSync(join(d, name)));

/** What this host lacks to run a slapd (undefined: nothing); without can-run's vitest, for the browser journeys too. */
export function slapdMissing(): string | undefined {
  const missing = SLAPD_PROGRAMS.filter((n) => !onPath(n));
  return missing.length > 0 ? `needs ${missing.join(', ')} (not installed: apt-get install slapd ldap-utils)` : undefined;
}

export const LDAP_BASE = 'dc=example,dc=org';
export const PEOPLE_BASE = `ou=people,${LDAP_BASE}`;
export const GROUPS_BASE = `ou=groups,${LDAP_BASE}`;
export const TEACHERS_DN = `cn=teachers,${GROUPS_BASE}`;
export const STUDENTS_DN = `cn=students,${GROUPS_BASE}`;
/** Excludes the disabled person as an Active Directory filter excludes userAccountControl's ACCOUNTDISABLE. */
export const USER_FILTER = '(&(objectClass=inetOrgPerson)(uid={username})(!(employeeType=disabled)))';

export type DirectoryPerson = { uid: string; password: string; dn: string; name: string; email: string };

export type Slapd = {
  /** ldap://127.0.0.1:<port> (StartTLS offered) */
  url: string;
  /** ldaps://127.0.0.1:<port> */
  ldapsUrl: string;
  /** The test CA's certificate (PEM) that signed the server's, and another CA's that did not. */
  ca: string;
  otherCa: string;
  bindDn: string;
  bindPassword: string;
  people: { teacher: DirectoryPerson; student: DirectoryPerson; outsider: DirectoryPerson; disabled: DirectoryPerson };
  /** A tiny JPEG the teacher has as jpegPhoto. */
  teacherPhoto: Buffer;
  /** ldapmodify as the directory's root (an LDIF of changes). */
  modify(ldif: string): void;
  /** Everything slapd wrote (stats: connections, binds by DN, searches; never a password). */
  output(): string;
  stop(): Promise<void>;
};

/** A port nobody listens on at the moment (slapd cannot bind port 0 and tell). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A TCP server that accepts connections and never answers: a directory that hangs. */
export async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `ldap://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

const openssl = (dir: string, ...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });

/** A CA, and a server certificate for 127.0.0.1 / localhost it signed; another CA besides. */
function makeCertificates(dir: string) {
  for (const name of ['ca', 'other-ca']) {
    openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=VDI test ${name}`,
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  }
  openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n');
  openssl(dir, 'x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'server.ext');
}

// The smallest JPEG-looking payload: SOI, an APP0 JFIF header, EOI (the directory keeps the bytes as they are).
const TINY_JPEG = Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex');

/** Starts slapd in a fresh temporary directory; `stop()` ends it and removes the directory. */
export async function startSlapd(): Promise<Slapd> {
  const dir = mkdtempSync(join(tmpdir(), 'ldap-'));
  const [plainPort, tlsPort] = [await freePort(), await freePort()];
  const rootPassword = randomBytes(12).toString('base64url');
  const bindPassword = randomBytes(12).toString('base64url');
  const pw = () => `pw-${randomBytes(9).toString('base64url')}`;
  const person = (uid: string, name: string): DirectoryPerson => ({ uid, password: pw(), dn: `uid=${uid},${PEOPLE_BASE}`, name, email: `${uid}@example.org` });
  const people = {
    teacher: person('teacher1', 'Tina Teacher'),
    student: person('student1', 'Sam Student'),
    outsider: person('outsider1', 'Otto Outsider'),
    disabled: person('disabled1', 'Dora Disabled'),
  };
  let child: ChildProcess | undefined;
  let out = '';
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      const killer = setTimeout(() => child!.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    makeCertificates(dir);
    mkdirSync(join(dir, 'slapd.d'));
    mkdirSync(join(dir, 'db'));
    const config = `dn: cn=config
objectClass: olcGlobal
cn: config
olcPidFile: ${dir}/slapd.pid
olcTLSCACertificateFile: ${dir}/ca.pem
olcTLSCertificateFile: ${dir}/server.pem
olcTLSCertificateKeyFile: ${dir}/server.key

dn: cn=module{0},cn=config
objectClass: olcModuleList
cn: module{0}
olcModulePath: /usr/lib/ldap
olcModuleLoad: back_mdb
olcModuleLoad: memberof

dn: cn=schema,cn=config
objectClass: olcSchemaConfig
cn: schema

include: file:///etc/ldap/schema/core.ldif

include: file:///etc/ldap/schema/cosine.ldif

include: file:///etc/ldap/schema/inetorgperson.ldif

dn: olcDatabase={-1}frontend,cn=config
objectClass: olcDatabaseConfig
objectClass: olcFrontendConfig
olcDatabase: {-1}frontend
olcSizeLimit: 500

dn: olcDatabase={0}config,cn=config
objectClass: olcDatabaseConfig
olcDatabase: {0}config
olcAccess: {0}to * by * none

dn: olcDatabase={1}mdb,cn=config
objectClass: olcDatabaseConfig
objectClass: olcMdbConfig
olcDatabase: {1}mdb
olcSuffix: ${LDAP_BASE}
olcDbDirectory: ${dir}/db
olcDbMaxSize: 33554432
olcRootDN: cn=admin,${LDAP_BASE}
olcRootPW: ${rootPassword}
olcAccess: {0}to attrs=userPassword by self write by anonymous auth by * none
olcAccess: {1}to * by users read by * none

dn: olcOverlay={0}memberof,olcDatabase={1}mdb,cn=config
objectClass: olcOverlayConfig
objectClass: olcMemberOf
olcOverlay: {0}memberof
olcMemberOfRefInt: TRUE
olcMemberOfGroupOC: groupOfNames
olcMemberOfMemberAD: member
olcMemberOfMemberOfAD: memberOf
`;
    writeFileSync(join(dir, 'config.ldif'), config);
    execFileSync('slapadd', ['-n0', '-F', join(dir, 'slapd.d'), '-l', join(dir, 'config.ldif')], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = spawn('slapd', ['-d', '256', '-F', join(dir, 'slapd.d'), '-h', `ldap://127.0.0.1:${plainPort}/ ldaps://127.0.0.1:${tlsPort}/`], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    const url = `ldap://127.0.0.1:${plainPort}`;
    const root = ['-x', '-H', url, '-D', `cn=admin,${LDAP_BASE}`, '-w', rootPassword];
    await until('slapd to answer', async () => {
      if (child!.exitCode !== null) throw new Error(`slapd ended while starting:\n${out}`);
      try {
        execFileSync('ldapsearch', [...root, '-b', '', '-s', 'base', 'objectClass=*'], { stdio: 'ignore', timeout: 5_000 });
        return true;
      } catch {
        return false;
      }
    }, 20_000);
    const entry = (p: DirectoryPerson, extra = '') => `dn: ${p.dn}
objectClass: inetOrgPerson
uid: ${p.uid}
cn: ${p.name}
sn: ${p.name.split(' ')[1]}
givenName: ${p.name.split(' ')[0]}
mail: ${p.email}
userPassword: ${p.password}
${extra}`;
    const data = `dn: ${LDAP_BASE}
objectClass: dcObject
objectClass: organization
dc: example
o: Example School

dn: ${PEOPLE_BASE}
objectClass: organizationalUnit
ou: people

dn: ${GROUPS_BASE}
objectClass: organizationalUnit
ou: groups

dn: ou=services,${LDAP_BASE}
objectClass: organizationalUnit
ou: services

dn: cn=portal,ou=services,${LDAP_BASE}
objectClass: organizationalRole
objectClass: simpleSecurityObject
cn: portal
userPassword: ${bindPassword}

${entry(people.teacher, `jpegPhoto:: ${TINY_JPEG.toString('base64')}\ndepartmentNumber: science\n`)}
${entry(people.student, 'departmentNumber: 1a\n')}
${entry(people.outsider)}
${entry(people.disabled, 'employeeType: disabled\n')}
dn: ${TEACHERS_DN}
objectClass: groupOfNames
cn: teachers
member: ${people.teacher.dn}
member: ${people.disabled.dn}

dn: ${STUDENTS_DN}
objectClass: groupOfNames
cn: students
member: ${people.student.dn}
`;
    writeFileSync(join(dir, 'data.ldif'), data);
    execFileSync('ldapadd', [...root, '-f', join(dir, 'data.ldif')], { stdio: ['ignore', 'ignore', 'pipe'] });
    return {
      url,
      ldapsUrl: `ldaps://127.0.0.1:${tlsPort}`,
      ca: readFileSync(join(dir, 'ca.pem'), 'utf8'),
      otherCa: readFileSync(join(dir, 'other-ca.pem'), 'utf8'),
      bindDn: `cn=portal,ou=services,${LDAP_BASE}`,
      bindPassword,
      people,
      teacherPhoto: TINY_JPEG,
      modify(ldif: string) {
        execFileSync('ldapmodify', root, { input: ldif, stdio: ['pipe', 'ignore', 'pipe'] });
      },
      output: () => out,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
