// Allowed: a feature looks down at lib and at an entity.
import { format } from '../../lib/format';
import { desktop } from '../../entities/desktop';
// Across features: a imports b's file.
import { thing } from '../b/thing';

export const page = () => [format(), desktop(), thing];
