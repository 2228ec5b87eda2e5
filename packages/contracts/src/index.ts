export * from './errors';
export * from './events';
export * from './threads';
export * from './turns';
