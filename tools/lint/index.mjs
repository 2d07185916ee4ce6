// Resolved from this folder, typescript-eslint finds the TypeScript 6 installed beside it.
export { default as tseslint } from 'typescript-eslint';
