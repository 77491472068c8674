export * from './queue.ts';
// Slot arithmetic is pure (no driver): the domain counts and predicts slots with the same rules
// the adapters fire them by (schedule validation, next_run, missed slots, catch-up).
export { latestSlot, normalizeRepeat, slotAfter, validateRepeat } from './embedded/repeat-slots.ts';
