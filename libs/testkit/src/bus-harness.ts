import { expect } from 'vitest';
import { BusError } from '@agent-platform/bus';
import type { Bus } from '@agent-platform/bus';

/** What an adapter factory hands the bus conformance suite, once per test. */
export interface BusUnderTest {
  bus: Bus;
  /**
   * Another connection to the same bus (another client process for NATS). The embedded adapter
   * returns the same instance. Without it the multi-connection cases run on `bus` alone.
   */
  second?: () => Promise<Bus>;
  /** Removes what the factory created; runs after the suite closed every bus it was given. */
  cleanup: () => Promise<void>;
}

export type BusFactory = () => Promise<BusUnderTest>;

/** Accessors the case files use; one fresh bus (and a unique subject prefix) per test. */
export interface BusHarness {
  readonly bus: Bus;
  second(): Promise<Bus>;
  /** A subject or stream name unique to this test, so tests sharing one server never meet. */
  name(suffix: string): string;
}

/** Asserts the promise rejects with a `BusError` of `code`, and returns that error. */
export async function expectBusError(promise: Promise<unknown>, code: BusError['code']): Promise<BusError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BusError);
  expect((error as BusError).code).toBe(code);
  return error as BusError;
}
