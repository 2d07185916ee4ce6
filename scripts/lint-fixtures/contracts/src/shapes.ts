// contracts importing the server.
import type { Disk } from '../../server/src/engine/types';

export type Shape = Disk;
