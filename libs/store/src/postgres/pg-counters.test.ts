import { describe, expect, it } from 'vitest';
import { suitePostgres } from '@agent-platform/testkit';
import { PgCounters } from './pg-counters.ts';
import { PgHandle } from './pg-handle.ts';
import { openPostgresStore } from './postgres-store.ts';
import { dropSchema, freshSchemaName, postgresSkipReason } from './pg-test-server.ts';

const skipReason = postgresSkipReason();

describe.skipIf(skipReason !== null)(`postgres counters' addMany batches${skipReason === null ? '' : ` [SKIPPED: ${skipReason}]`}`, () => {
  const postgres = suitePostgres();

  /** Counters on a migrated schema, through a handle that counts the statements it sends. */
  async function countedCounters() {
    const schema = freshSchemaName();
    await (await openPostgresStore({ url: postgres.url(), schema })).close();
    const handle = new PgHandle({ urls: [postgres.url()], poolSize: 4, statementTimeoutMs: 5000, connectTimeoutMs: 5000 });
    const sent: string[] = [];
    const query = handle.query.bind(handle);
    handle.query = (text, params) => {
      sent.push(text);
      return query(text, params);
    };
    const counters = new PgCounters(handle, schema, () => new Date());
    return {
      counters,
      sent,
      close: async () => {
        await handle.close();
        await dropSchema(postgres.url(), schema);
      },
    };
  }

  it('applies the addMany calls of one turn as one statement, each delta once', async () => {
    const { counters, sent, close } = await countedCounters();
    try {
      await Promise.all([
        counters.addMany([
          { key: 'usage:a', delta: 3 },
          { key: 'stats:a', delta: 1 },
        ]),
        counters.addMany([{ key: 'usage:a', delta: 4 }]),
        counters.addMany([
          { key: 'stats:b', delta: 2 },
          { key: 'stats:a', delta: 1 },
        ]),
      ]);
      expect(sent.filter((text) => text.includes('unnest'))).toHaveLength(1);
      // Calls in later turns go on their own.
      await counters.addMany([{ key: 'usage:a', delta: 10 }]);
      await counters.addMany([{ key: 'usage:a', delta: 100 }]);
      expect(sent.filter((text) => text.includes('unnest'))).toHaveLength(3);
      expect(await counters.list('')).toEqual({ 'stats:a': 2, 'stats:b': 2, 'usage:a': 117 });
    } finally {
      await close();
    }
  });

  it('fails only the call whose add would overflow, and applies the others of its turn', async () => {
    const { counters, close } = await countedCounters();
    try {
      await counters.add('big', Number.MAX_SAFE_INTEGER - 1);
      const outcomes = await Promise.allSettled([
        counters.addMany([{ key: 'fine', delta: 5 }]),
        counters.addMany([
          { key: 'big', delta: 2 },
          { key: 'other', delta: 1 },
        ]),
        counters.addMany([{ key: 'fine', delta: 1 }]),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(RangeError);
      // The refused call changed nothing, not even its other key.
      expect(await counters.list('')).toEqual({ big: Number.MAX_SAFE_INTEGER - 1, fine: 6 });
    } finally {
      await close();
    }
  });

  it('rejects every call of the turn when the statement fails for another reason, and sends none again', async () => {
    const { counters, sent, close } = await countedCounters();
    await close();
    const outcomes = await Promise.allSettled([counters.addMany([{ key: 'a', delta: 1 }]), counters.addMany([{ key: 'b', delta: 1 }])]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/closed/);
    expect(sent.filter((text) => text.includes('unnest'))).toHaveLength(1);
  });
});
