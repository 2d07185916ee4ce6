export * from './errors';
export * from './roles';
export * from './languages';
export * from './quota';
export * from './auth';
export * from './user';
export * from './socket';
export * from './desktops';
