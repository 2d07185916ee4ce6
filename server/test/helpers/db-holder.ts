// A stand-in for the server process in database tests: opens the embedded database under the
// directory given as argument, commits one settings row per line read on stdin (`write <key>`),
// answers `committed <key>` on stdout, and otherwise holds the database until it is killed.
import { createInterface } from 'node:readline';
import { openDatabase, schema } from '../../src/db';

const database = await openDatabase({ dir: process.argv[2]! });
process.stdout.write('open\n');
for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, key] = line.split(' ');
  if (cmd === 'write') {
    await database.db.insert(schema.config).values({ key: key!, value: { written: true } });
    process.stdout.write(`committed ${key}\n`);
  }
}
