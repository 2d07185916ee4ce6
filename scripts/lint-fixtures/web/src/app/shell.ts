// Allowed: app looks down at a feature.
import { thing } from '../features/b/thing';

export const shell = () => thing;
