import type { BenchTarget } from '../target.ts';
import { allInOneHealth } from './all-in-one-health.ts';
import { allInOneSend } from './all-in-one-send.ts';
import { allInOneSendLongSession } from './all-in-one-send-long-session.ts';
import { allInOneWhoami } from './all-in-one-whoami.ts';
import { fleetLatencyHttp, fleetLatencyNats } from './fleet-latency.ts';
import { fleetSchedulesOne, fleetSchedulesOneSpread, fleetSchedulesTwo } from './fleet-schedules.ts';
import { fleetSend } from './fleet-send.ts';
import { fleetInFlight } from './fleet-inflight.ts';
import { fleetOneWorker, fleetTwoWorkers } from './fleet-workers.ts';
import { helloWorld } from './hello-world.ts';
import { registryPublishEight, registryPublishOne } from './registry-publish.ts';
import { registrySearch } from './registry-search.ts';
import { registrySearchPublishing } from './registry-search-publishing.ts';
import { sendFloorFile, sendFloorFleet, sendFloorSqlite, sendFloorStore } from './send-floor.ts';
import { agentStatusManyCounters, licenceStatusManyCounters } from './many-counters.ts';
import { toolJournalInvokeAllInOne, toolJournalInvokeFleet, toolJournalWorkflowAllInOne, toolJournalWorkflowFleet } from './tool-journal.ts';
import { workflowFanOut8 } from './workflow-fanout-8.ts';
import { workflowStepsAllInOne } from './workflow-steps-all-in-one.ts';
import { workflowStepsFleet } from './workflow-steps-fleet.ts';
import {
  allInOneSendLongSessionPostgres,
  allInOneSendPostgres,
  fleetLatencyHttpPostgres,
  fleetLatencyNatsPostgres,
  fleetOneWorkerPostgres,
  fleetSchedulesOnePostgres,
  fleetSendPostgres,
  fleetTwoWorkersPostgres,
  workflowStepsFleetPostgres,
} from './postgres.ts';

/**
 * Every target, in run order (the baseline first, so a cut-short run still has it). Goals are
 * evaluated after the whole run, against whichever targets ran.
 */
export const TARGETS: BenchTarget[] = [
  helloWorld,
  allInOneHealth,
  allInOneWhoami,
  allInOneSend,
  allInOneSendLongSession,
  sendFloorFile,
  sendFloorSqlite,
  sendFloorStore,
  agentStatusManyCounters,
  licenceStatusManyCounters,
  fleetSend,
  sendFloorFleet,
  fleetLatencyNats,
  fleetLatencyHttp,
  fleetOneWorker,
  fleetTwoWorkers,
  fleetInFlight,
  workflowStepsAllInOne,
  workflowStepsFleet,
  workflowFanOut8,
  toolJournalInvokeAllInOne,
  toolJournalInvokeFleet,
  toolJournalWorkflowAllInOne,
  toolJournalWorkflowFleet,
  fleetSchedulesOne,
  fleetSchedulesTwo,
  fleetSchedulesOneSpread,
  allInOneSendPostgres,
  allInOneSendLongSessionPostgres,
  fleetSendPostgres,
  fleetLatencyNatsPostgres,
  fleetLatencyHttpPostgres,
  fleetOneWorkerPostgres,
  fleetTwoWorkersPostgres,
  workflowStepsFleetPostgres,
  fleetSchedulesOnePostgres,
  registrySearch,
  registrySearchPublishing,
  registryPublishOne,
  registryPublishEight,
];
