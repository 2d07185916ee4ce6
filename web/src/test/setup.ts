import '@testing-library/jest-dom/vitest';
import { configure } from '@testing-library/react';
import { scaled } from './slowdown';

// findBy… and waitFor give up after 1 s by default: a quiet machine's figure, times its measured slowdown.
configure({ asyncUtilTimeout: scaled(1000) });
