export * from './errors';
export * from './events';
export * from './limits';
export * from './text';
export * from './threads';
export * from './turns';
