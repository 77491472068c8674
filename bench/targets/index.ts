import type { BenchTarget } from '../target.ts';
import { allInOneHealth } from './all-in-one-health.ts';
import { allInOneSend } from './all-in-one-send.ts';
import { allInOneWhoami } from './all-in-one-whoami.ts';
import { helloWorld } from './hello-world.ts';

/**
 * Every target, in run order (the baseline first, so a cut-short run still has it). Goals are
 * evaluated after the whole run, against whichever targets ran. The fleet targets (api nodes
 * and workers over NATS), the direct NATS request and the one-vs-two-workers pair go here too.
 */
export const TARGETS: BenchTarget[] = [helloWorld, allInOneHealth, allInOneWhoami, allInOneSend];
