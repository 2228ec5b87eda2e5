export * from './errors';
export * from './events';
export * from './feedback';
export * from './hitl';
export * from './limits';
export * from './shares';
export * from './threads';
export * from './turns';
