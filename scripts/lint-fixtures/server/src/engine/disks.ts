// An adapter importing a module.
import { rule } from '../modules/desktops/rule';

export const grow = () => rule;
