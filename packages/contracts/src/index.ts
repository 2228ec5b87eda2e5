export * from './errors';
export * from './events';
export * from './limits';
export * from './feedback';
export * from './shares';
export * from './threads';
export * from './turns';
