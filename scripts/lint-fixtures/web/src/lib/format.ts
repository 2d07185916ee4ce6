// Up a layer: lib imports app.
import { shell } from '../app/shell';

export const format = () => String(shell());
