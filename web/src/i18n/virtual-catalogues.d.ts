declare module 'virtual:vdi-catalogues' {
  /** The file stems of the complete catalogues (see `web/catalogues-plugin.ts`). */
  export const COMPLETE: string[];
}
