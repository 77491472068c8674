import pg from 'pg';

/** Distinct statement texts a process names at most; later ones go unnamed (`find` builds an open set of texts). */
const MAX_NAMED_STATEMENTS = 500;

/**
 * A name per statement text, the same for every connection of the process. Sent with a name, a
 * statement is parsed and planned by the server once per connection (node-postgres remembers
 * which connections have it and then sends only Bind and Execute); unnamed, it is parsed and
 * planned on every run. The store builds its SQL text from vetted identifiers only, never from
 * values, so the set of texts is small. docs/postgres.md "Prepared statements".
 */
export class StatementNames {
  private readonly names = new Map<string, string>();

  constructor(private readonly max = MAX_NAMED_STATEMENTS) {}

  nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < this.max) {
      name = `ap_${this.names.size}`;
      this.names.set(text, name);
    }
    return name;
  }
}

/**
 * node-postgres's client, sending a statement given with a values array (every one the store runs
 * through `PgHandle.query` and the collections, logs and counters, parameters or not) by its name
 * from `names`; text alone (`BEGIN`, `COMMIT`, schema changes) goes unnamed, as before. A named
 * statement survives the rollback of the transaction it was first parsed in; one whose parse
 * failed is parsed again next time (node-postgres forgets it on the error).
 */
export function namingClient(names: StatementNames): typeof pg.Client {
  return class NamingClient extends pg.Client {
    // The driver's overloads, taken as they come: only (text, values) is rewritten.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override query(config: any, values?: any, callback?: any): any {
      if (typeof config === 'string' && Array.isArray(values)) {
        const name = names.nameOf(config);
        if (name !== undefined) {
          const named: pg.QueryConfig = { name, text: config, values };
          return callback === undefined ? super.query(named) : super.query(named, callback);
        }
      }
      return super.query(config, values, callback);
    }
  };
}
