export const thing = 'b';
