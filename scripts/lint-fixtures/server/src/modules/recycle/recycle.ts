import { entries } from './entries';

export const recycle = () => entries;
