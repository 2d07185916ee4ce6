// Up a layer: an entity imports a feature.
import { thing } from '../features/b/thing';
// Allowed: an entity looks down at lib.
import { format } from '../lib/format';

export const desktop = () => `${thing} ${format()}`;
