export * from './error-category.ts';
export * from './envelope.ts';
export * from './roles.ts';
export * from './config.ts';
