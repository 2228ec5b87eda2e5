export * from './accounts';
export * from './errors';
export * from './events';
export * from './feedback';
export * from './limits';
export * from './shares';
export * from './threads';
export * from './turns';
