export { EMBEDDED_QUEUE_FILE, EMBEDDED_STORE_FILE, openEngines, type Engines, type OpenEnginesOptions } from './open-engines.ts';
export { createProcessLifecycle, type ProcessLifecycle, type ProcessLifecycleOptions, type ProcessService } from './process-lifecycle.ts';
export { assertSharedBus, runMain, runService, type ComposeContext, type ComposedProcess, type RunServiceOptions } from './run-service.ts';
export { platformVersion } from './platform-version.ts';
export { probeEngines, type EngineReport, type EnginesHealth } from './engine-health.ts';
export { openProcess, type ComposeOptions } from './open-process.ts';
