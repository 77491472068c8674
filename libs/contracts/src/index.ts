export * from './error-category.ts';
export * from './envelope.ts';
export * from './roles.ts';
export * from './config.ts';
export * from './http/security.ts';
export * from './licence.ts';
export * from './http/auth.ts';
export * from './http/daemon.ts';
