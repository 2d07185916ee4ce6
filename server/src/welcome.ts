import type { SeedResult } from './seed/seed';

/** What `npm start` prints once the portal listens: its address and the demo sign-ins. */
export function welcomeText(url: string, result: SeedResult, demoPasswordSet: boolean): string {
  const lines = ['', `  VDI portal is running at ${url}`, ''];
  if (result.created) {
    lines.push(
      demoPasswordSet
        ? '  Sign in with these accounts (the password is the DEMO_PASSWORD you set):'
        : '  Sign in with these accounts (passwords are shown only now; set DEMO_PASSWORD to choose one):',
    );
    for (const a of result.accounts) {
      lines.push(`    ${a.username.padEnd(12)} ${a.role.padEnd(9)} category ${a.category.padEnd(8)} password ${a.password}`);
    }
    if (result.registrationCode) lines.push('', `  Registration code for self sign-up (group Students 1B): ${result.registrationCode}`);
  } else {
    const accounts = result.accounts.map((a) => a.username).join(', ');
    lines.push(
      `  Demo sign-ins: ${accounts} (category Default). ` +
        (demoPasswordSet ? 'Password: the DEMO_PASSWORD you set.' : 'Passwords were printed at the first start; set DEMO_PASSWORD to reset them.'),
    );
  }
  lines.push('');
  return lines.join('\n') + '\n';
}
