export * from './accounts';
export * from './errors';
export * from './events';
export * from './limits';
export * from './threads';
export * from './turns';
