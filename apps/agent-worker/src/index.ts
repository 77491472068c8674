export * from './service.ts';
export * from './compose.ts';
export * from './compose-integrations.ts';
export * from './compose-tools.ts';
export * from './webhook-delivery-service.ts';
export * from './compose-channels.ts';
