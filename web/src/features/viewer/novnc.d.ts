/// <reference types="novnc__novnc" />
// @types/novnc__novnc declares the old module path only; the package exports its RFB at the root.
declare module '@novnc/novnc' {
  import RFB from '@novnc/novnc/lib/rfb';
  export default RFB;
}
