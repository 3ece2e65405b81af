/**
 * Each read is described once and its variants (every account, one, several) are made from that
 * description: on PostgreSQL, the account is the parameter after the read's own; on SQLite, its `?`
 * is where the slot is. The variants must exist for every read and take the values given them.
 */
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { databaseUrl, isolatedPostgresUrl, postgresSession, storeAt, tempSqlitePath } from '../../test/helpers/stores.ts';
import { ACCOUNT_KINDS, accountParameter, rangedRead, type AccountKind } from './account-variants.ts';
import { accountVariants, forAccounts, QUERIES, type AccountRead } from './postgres-queries.ts';
import { SUMMARY_QUERIES } from './postgres-summary.ts';
import { accountParameter as sqliteAccountParameter, prepareSummaryStatements } from './sqlite-summary.ts';

const READS = [
  'newest',
  'after',
  'confirmedAfter',
  'newestInRange',
  'newestSince',
  'newestInRangeByStatus',
  'newestByStatus',
] as const satisfies readonly AccountRead[];
// Every read of the store is in READS: a read added without it fails to compile here.
const everyRead: [Exclude<AccountRead, (typeof READS)[number]>] extends [never] ? true : false = true;

const FILTERS = {
  all: { accountNumber: undefined, accounts: undefined },
  one: { accountNumber: '0123456789', accounts: undefined },
  several: { accountNumber: undefined, accounts: ['0123456789', '1111111111'] },
} as const;

// Every read described for PostgreSQL, with the map of statements its variants are in.
const POSTGRES_READS = [
  ...READS.map((read) => [read, QUERIES] as const),
  ['daySums', SUMMARY_QUERIES] as const,
  ['confirmedDaySums', SUMMARY_QUERIES] as const,
];

/** The text of `read`'s variant for `kind`, as the store picks it by name. */
const variantOf = (read: string, queries: Record<string, string>, kind: AccountKind) => queries[forAccounts(read, FILTERS[kind], []).name]!;

/** `groups`' entries with their names prefixed by `prefix`. */
const prefixed = <T>(prefix: string, groups: Record<string, T>) =>
  Object.fromEntries(Object.entries(groups).map(([name, group]) => [`${prefix}.${name}`, group]));

/** The parameter numbers a statement uses, in ascending order, each once. */
const parameters = (sql: string) => [...new Set(Array.from(sql.matchAll(/\$(\d+)/g), (match) => Number(match[1])))].sort((a, b) => a - b);
const oneTo = (n: number) => Array.from({ length: n }, (_, index) => index + 1);

describe('account variants', () => {
  it("fills the account slot with nothing, one account or several, numbered after the read's own parameters", () => {
    const variants = accountVariants((account) => `SELECT 1 FROM t WHERE ${account}a = $1 AND b = $2`);
    expect(variants).toEqual({
      all: 'SELECT 1 FROM t WHERE a = $1 AND b = $2',
      one: 'SELECT 1 FROM t WHERE account_number = $3 AND a = $1 AND b = $2',
      several: 'SELECT 1 FROM t WHERE account_number = ANY($3::text[]) AND a = $1 AND b = $2',
    });
  });

  it("picks the variant of a filter and appends its account to the read's values", () => {
    expect(everyRead).toBe(true);
    expect(accountParameter(FILTERS.all)).toEqual(['all', []]);
    expect(accountParameter(FILTERS.one)).toEqual(['one', ['0123456789']]);
    expect(accountParameter(FILTERS.several)).toEqual(['several', [['0123456789', '1111111111']]]);
    expect(forAccounts('newest', FILTERS.one, ['x', 0, 20])).toEqual({ name: 'newestOfAccount', values: ['x', 0, 20, '0123456789'] });
    expect(sqliteAccountParameter(FILTERS.several)).toEqual(['several', ['["0123456789","1111111111"]']]);
  });

  it('reads a time-ranged page since `from` without `to`, and from the start without `from`', () => {
    const time = (date: Date) => date.getTime();
    expect(rangedRead({ from: new Date(5), to: undefined }, time, -1)).toEqual(['newestSince', [5]]);
    expect(rangedRead({ from: undefined, to: new Date(9) }, time, -1)).toEqual(['newestInRange', [-1, 9]]);
    expect(rangedRead({ from: new Date(5), to: new Date(9) }, time, -1)).toEqual(['newestInRange', [5, 9]]);
  });

  it('has every PostgreSQL read in its three variants, each numbering its parameters 1 to n, the account last', () => {
    for (const [read, queries] of POSTGRES_READS) {
      const text = (kind: AccountKind) => variantOf(read, queries, kind);
      const own = parameters(text('all')).length;
      expect(parameters(text('all')), read).toEqual(oneTo(own));
      expect(parameters(text('one')), read).toEqual(oneTo(own + 1));
      expect(parameters(text('several')), read).toEqual(oneTo(own + 1));
      expect(text('one'), read).toContain(`account_number = $${own + 1} AND `);
      expect(text('several'), read).toContain(`account_number = ANY($${own + 1}::text[]) AND `);
      // The values forAccounts hands over line up with the parameters.
      for (const kind of ACCOUNT_KINDS)
        expect(forAccounts(read, FILTERS[kind], oneTo(own)).values, `${read} ${kind}`).toHaveLength(parameters(text(kind)).length);
    }
  });

  it('names each distinct PostgreSQL statement text once', () => {
    const texts = [...Object.values(QUERIES), ...Object.values(SUMMARY_QUERIES)];
    expect(new Set(texts).size).toBe(texts.length);
    expect(Object.keys(QUERIES)).toHaveLength(8 + 3 * READS.length);
  });

  it("prepares SQLite's variants with the account's one parameter more than the read for every account, or `:account`", async () => {
    const path = tempSqlitePath();
    await (await storeAt(`sqlite:${path}`)).close();
    const database = new DatabaseSync(path);
    const placeholders = (sql: string) => sql.split('?').length - 1;
    try {
      const { daySums, beyondKobo, ...reads } = prepareSummaryStatements(database);
      const variantsOf = Object.entries({ ...reads, ...prefixed('daySums', daySums), ...prefixed('beyondKobo', beyondKobo) });
      expect(variantsOf).toHaveLength(9);
      for (const [read, variants] of variantsOf) {
        const own = placeholders(variants.all.sourceSQL);
        if (variants.one.sourceSQL.includes(':account')) {
          expect(variants.all.sourceSQL, read).not.toContain(':account');
          expect(variants.several.sourceSQL, read).toContain('json_each(:account)');
          continue;
        }
        expect(placeholders(variants.one.sourceSQL), read).toBe(own + 1);
        expect(placeholders(variants.several.sourceSQL), read).toBe(own + 1);
      }
    } finally {
      database.close();
    }
  });
});

describe.runIf(databaseUrl !== undefined)('PostgreSQL account variants', () => {
  it("prepares each variant with the read's parameter types, then text for one account or text[] for several", async () => {
    const url = await isolatedPostgresUrl(databaseUrl!);
    await storeAt(url);
    const client = await postgresSession(url);
    const typesOf = async (sql: string) => {
      await client.query('DEALLOCATE ALL');
      await client.query(`PREPARE variant AS ${sql}`);
      const { rows } = await client.query<{ types: string[] }>(
        "SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = 'variant'",
      );
      return rows[0]!.types;
    };
    for (const [read, queries] of POSTGRES_READS) {
      const text = (kind: AccountKind) => variantOf(read, queries, kind);
      const own = await typesOf(text('all'));
      expect(await typesOf(text('one')), read).toEqual([...own, 'text']);
      expect(await typesOf(text('several')), read).toEqual([...own, 'text[]']);
    }
  });
});
