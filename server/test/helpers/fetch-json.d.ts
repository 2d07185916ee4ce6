// Tests read many JSON answers and assert their shape with expect(); typing each one adds nothing.
declare global {
  interface Response {
    json(): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- see the comment above
  }
}
export {};
