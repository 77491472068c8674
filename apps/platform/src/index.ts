export { composePlatformServices } from './compose.ts';
