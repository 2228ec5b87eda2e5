export * from './errors';
export * from './events';
export * from './hitl';
export * from './limits';
export * from './threads';
export * from './turns';
